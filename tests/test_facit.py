"""Facit scoring (dataset/facit.py): BEN's rule entry by entry, the two table orders, the unclosed
`{`, and the rule proved on the robots: every board of every Results file in BEN's Challenges
folder, its final contract scored with its problem's table, gives the file's `Facit Score:`."""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path

import pytest

from bridgeflow.dataset import facit, pbn, validate
from bridgeflow.dataset.encodings import call_name
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.record import BoardRecord


def table(text: str, points_first: bool = False) -> facit.Table:
    return facit.parse_table(text.split(), points_first)


def played(text: str) -> tuple[int, int | None, int | None, int | None]:
    """'S4SX' (declarer, level, strain, doubling) -> (level, strain, doubled, declarer); 'pass'."""
    if text == "pass":
        return 0, None, None, None
    return int(text[1]), "CDHSN".index(text[2]), len(text) - 3, "NESW".index(text[0])


RULE_CASES = [
    # table, final contract, points, what it shows
    ("4S 10 3N 6", "S4S", 10, "exact"),
    ("3N 6 4S 10", "N4S", 10, "exact, later in the table"),
    ("3N 9", "N3N", 9, "an entry without declarer matches either"),
    ("3N 9", "W3N", 9, "... any declarer"),
    ("S6N 10 N6N 8", "S6N", 10, "declarer-specific"),
    ("S6N 10 N6N 8", "N6N", 8, "the other declarer's entry is passed over"),
    ("S3N 10", "N3N", 0, "declarer-specific, wrong declarer"),
    ("2N 10 1N 8", "S1N", 10, "an adjustment listed earlier beats a later exact entry"),
    ("1N 8 2N 10", "S1N", 8, "an exact entry listed earlier beats a later adjustment"),
    ("5N 4", "N3N", 4, "3N takes 4N and 5N"),
    ("S4N 7", "S3N", 7, "an adjustment with the declarer's letter"),
    ("S4N 7", "N3N", 0, "an adjustment with the other declarer's letter"),
    ("1N 8", "S2N", 0, "never downwards"),
    ("3N 5", "S2N", 0, "2N has no adjustment"),
    ("3H 7", "S1H", 7, "1H takes 2H and 3H"),
    ("4H 10", "S1H", 0, "... not 4H"),
    ("4H 10", "S3H", 0, "3H has no adjustment"),
    ("5H 7", "S4H", 7, "4H takes 5H"),
    ("4C 6", "N1C", 6, "1C takes up to 4C"),
    ("5C 6", "N3C", 0, "3C takes 4C only"),
    ("4HX 5", "S4HX", 5, "doubled: exact"),
    ("E3CX 7", "E3CX", 7, "doubled: declarer-specific"),
    ("E4CX 7", "E3CX", 0, "doubled: no adjustment"),
    ("3C 7", "E3CX", 0, "doubled: an undoubled entry does not match"),
    ("E3CX 7", "E3C", 0, "undoubled: a doubled entry does not match"),
    ("4HXX 9 4HX 5", "S4HXX", 9, "redoubled: exact"),
    ("4HX 5", "S4HXX", 0, "redoubled: a doubled entry does not match"),
    ("W4SP 1", "W4S", 0, "a P suffix never matches"),
    ("E2HP 4 2D 9", "E2D", 9, "... and does not stop the search"),
    ("2S 10 3S 6", "S6H", 0, "nothing matched"),
    ("2S 10", "pass", 0, "passed out"),
    ("", "S4S", 0, "an empty table"),
]


@pytest.mark.parametrize("table_text, contract, points, why", RULE_CASES, ids=[case[3] for case in RULE_CASES])
def test_the_rule(table_text, contract, points, why):
    assert facit.award_points(table(table_text), *played(contract)) == points


def test_the_adjustments_are_bens_and_same_strain_upwards():
    for contract, adjusted in facit.ADJUSTMENTS.items():
        assert all(other[1] == contract[1] and other[0] > contract[0] for other in adjusted)
    assert facit.ADJUSTMENTS["3N"] == ("4N", "5N") and "2N" not in facit.ADJUSTMENTS and len(facit.ADJUSTMENTS) == 15


@pytest.mark.parametrize("text, normal", [("4s", "4S"), (" s6n ", "S6N"), ("e3cx", "E3CX"), ("N4HXX", "N4HXX"),
                                          ("w4hp", "W4HP")])
def test_contracts_are_normalised(text, normal):
    assert facit.normalise_contract(text) == normal


@pytest.mark.parametrize("text", ["8S", "0C", "3NT", "4SXP", "X4S", "4Z", "NS4S", ""])
def test_other_words_are_not_contracts(text):
    with pytest.raises(ValueError, match="not a contract"):
        facit.normalise_contract(text)


def test_both_table_orders_give_one_table():
    assert table("10 4H 7 3h", points_first=True) == table("4H 10 3H 7") == (
        facit.Award("4H", 10), facit.Award("3H", 7))


@pytest.mark.parametrize("words, message", [("4H 10 3H", "3 words"), ("4H ten", "points 'ten'"),
                                            ("4H 10 4K 7", "not a contract: '4K'")])
def test_a_bad_table_names_the_word(words, message):
    with pytest.raises(ValueError, match=message):
        table(words)


def test_percent_is_points_over_each_boards_top_award():
    tables = [table("2S 10 3S 6"), table("6S 8 5S 4")]
    assert facit.percent([6, 8], tables) == pytest.approx(100 * 14 / 18)
    assert facit.top_points(table("3N 4 6N 9 4S 2")) == 9
    assert facit.percent([], []) == 0.0


def game(board: int, table_lines: str, scoring: str = "Facit") -> str:
    return (f'[Event ""]\n[Board "{board}"]\n[Dealer "N"]\n[Vulnerable "None"]\n'
            f'[Deal "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"]\n'
            f'[Scoring "{scoring}"]\n{table_lines}\n[Declarer ""]\n[Contract ""]\n[ Auction "N" ]\nAC 1C\nAC Pass\n')


def write(tmp_path: Path, *games: str) -> Path:
    path = tmp_path / "problems.pbn"
    path.write_text("% PBN 2.1\n" + "\n".join(games))
    return path


def test_problem_files_in_either_order(tmp_path):
    contract_first = facit.read_problems(write(tmp_path, game(1, "{ 2s 10 3S 6}"), game(2, "{ 6N 10 S6N 8 }")))
    assert [(problem.board, problem.table) for problem in contract_first] == [
        (1, table("2S 10 3S 6")), (2, table("6N 10 S6N 8"))]
    points_first = facit.read_problems(write(tmp_path, game(1, "{\n10\n2S\n6\n3S\n}"), game(2, "{ 10 6N 8 S6N }")))
    assert [problem.table for problem in points_first] == [problem.table for problem in contract_first]
    assert contract_first[0].deal.startswith("N:AKQJ.")


def test_an_unclosed_table_ends_at_the_next_tag_and_the_next_board_is_read(tmp_path):
    problems = facit.read_problems(write(tmp_path, game(10, "{ 2D 10 3C 9 "), game(11, "{ 6S 10 5S 6}")))
    assert [(problem.board, problem.table) for problem in problems] == [
        (10, table("2D 10 3C 9")), (11, table("6S 10 5S 6"))]


def test_the_real_unclosed_table(shared_dir):
    """oct13_feb23_nov23_jun24 board 10 never closes its `{`; board 11 keeps its own table and deal."""
    problems = {problem.board: problem for problem in facit.read_problems(
        shared_dir / "data/challenges/lorserker_ben/Challenges/oct13_feb23_nov23_jun24.pbn")}
    assert sorted(problems) == list(range(1, 41))
    assert problems[10].table == table("2D 10 3C 9 3D 7 4C 6 2S 4 3S 2")
    assert problems[11].table == table("6S 10 5S 6 N3N 3 3S 3 5C 3 S3N 2 4C 1")
    assert problems[11].deal == "N:AQ96.J92.942.AK8 T5.K653.QJT7.J92 KJ83.4.A8.QT7543 742.AQT87.K653.6"


@pytest.mark.parametrize("games, message", [
    ((game(1, "{ 2S 10 }"), game(2, "", scoring="")), r"problems.pbn: board 2: no Facit award table"),
    ((game(1, "{ 2S 10 2X 6 }"),), r"problems.pbn: board 1: award table: not a contract: '2X'"),
    ((game(1, "{ 2S 10 }") + game(2, "{ 2S 10 }"),), r"problems.pbn: board 1: a second \[Board\] tag \(line 15\)"),
])
def test_bad_problem_files_name_file_board_and_field(tmp_path, games, message):
    with pytest.raises(InputError, match=message):
        facit.read_problems(write(tmp_path, *games))


def scripted(board: int, dealer: str, vulnerable: str, auction_tag: str, calls: str) -> str:
    return (f'[Board "{board}"]\n[Dealer "{dealer}"]\n[Vulnerable "{vulnerable}"]\n'
            f'[Deal "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"]\n'
            f'[Scoring "Facit"]\n{{ 2S 10 }}\n{auction_tag}\n{calls}\n')


@pytest.mark.parametrize("dealer, tag, calls, script", [
    ("S", '[Auction "S"]', "1C 2S AC P", ("1C", "2S", "AC", "P")),  # our side's own call kept
    ("E", '[ Auction "E"]', "1D AC 2D AC\nPass", ("1D", "AC", "2D", "AC", "P")),  # on after an AC
    ("E", '[Auction "E" ]', "1d =1= AC PASS", ("1D", "AC", "P")),  # notes dropped, any case
    ("W", '[Auction "w"]', "1NT AC AP", ("1NT", "AC", "P", "P", "P")),
    ("N", '[Auction "W"]', "AC 1H AC", ("AC", "1H", "AC")),  # BW2 board 8: the dealer starts it
    ("W", '[Auction "N"]', "AC 2S AC Pass", ("P", "AC", "2S", "AC", "P")),  # oct13 board 4: W passes first
])
def test_scripts_keep_their_calls_from_the_dealer(tmp_path, dealer, tag, calls, script):
    problem, = facit.read_problems(write(tmp_path, scripted(1, dealer, "EW", tag, calls)))
    assert (problem.dealer, problem.vulnerability, problem.script) == ("NESW".index(dealer), 2, script)


def test_an_uncontested_problem_has_no_script(tmp_path):
    problem, = facit.read_problems(write(tmp_path, scripted(1, "N", "All", "", "")))
    assert (problem.dealer, problem.vulnerability, problem.script) == (0, 3, ())


@pytest.mark.parametrize("fields, message", [
    (("E", "None", '[Auction "E"]', "AC 1H"), r"board 1: Auction: an AC falls on East or West whether the calls "
                                              r"start at E or at the dealer E"),
    (("N", "None", '[Auction "N"]', "AC 1Z"), r"board 1: Auction: '1Z' is neither a call nor AC"),
    (("Q", "None", "", ""), r"board 1: Dealer 'Q' is not a seat"),
    (("N", "Some", "", ""), r"board 1: Vulnerable: vulnerability must be one of"),
])
def test_bad_scripts_name_file_board_and_field(tmp_path, fields, message):
    with pytest.raises(InputError, match=message):
        facit.read_problems(write(tmp_path, scripted(1, *fields)))


def test_the_real_scripts(shared_dir):
    """BW board 26 holds our side's opening; oct13_feb23_nov23_jun24 board 11 goes on after an AC
    on a second line and board 4 starts a seat after its dealer."""
    folder = shared_dir / "data/challenges/lorserker_ben/Challenges"
    bw = {problem.board: problem for problem in facit.read_problems(folder / "BW.pbn")}
    oct13 = {problem.board: problem for problem in facit.read_problems(folder / "oct13_feb23_nov23_jun24.pbn")}
    assert (bw[26].dealer, bw[26].script) == (2, ("1C", "2S", "AC", "P"))
    assert (oct13[11].dealer, oct13[11].script) == (1, ("1D", "AC", "2D", "AC", "P"))
    assert (oct13[4].dealer, oct13[4].script) == (3, ("P", "AC", "2S", "AC", "P"))
    assert sum(bool(problem.script) for problem in bw.values()) == 8 and bw[1].script == ()


def result(board: int, contract: str, declarer: str, score_table: str, facit_score: int, running: int) -> str:
    return (f'% PBN 2.1\n%Margins 2000,1000,2000,1000[Event ""]\n[Board "{board}"]\n'
            f'[Deal "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"]\n'
            f'[Declarer "{declarer}"]\n[Contract "{contract}"]\n[Scoring "Facit"]\n[Auction "N"]\n1S PASS\n'
            f'{{\\n\\n\n\nScore Table:\n\n{score_table}\n\nFacit Score: {facit_score:>4}\\nRunning Score: {running:>3}\n}}\n')


def test_results_files_carry_their_score_table(tmp_path):
    path = tmp_path / "results.pbn"
    path.write_text("\n".join([result(1, "4SX", "W", r" 2\s   10\n E3\cX    6\n 1N    4\n\n\n", 6, 6),
                               result(2, "Pass", "", r" 6N   10\n\n", 0, 6)]))
    first, second = facit.read_results(path)
    assert first.table == table("2S 10 E3CX 6 1N 4")
    assert (first.board, first.level, first.strain, first.doubled, first.declarer) == (1, 4, 3, 1, 3)
    assert (first.facit_score, first.running_score) == (6, 6)
    assert (second.level, second.table, second.facit_score) == (0, table("6N 10"), 0)


def test_a_results_auction_is_read_from_the_dealer(tmp_path):
    path = tmp_path / "results.pbn"
    path.write_text(result(1, "4SX", "W", r" 2\s   10\n", 6, 6).replace("1S PASS", "1S =1= PASS AP"))
    assert facit.read_results(path)[0].auction == ("1S", "P", "P", "P", "P")
    path.write_text(result(1, "4SX", "W", r" 2\s   10\n", 6, 6).replace("1S PASS", "1S 8Z"))
    with pytest.raises(InputError, match=r"results.pbn: board 1: Auction: '8Z' is not a call"):
        facit.read_results(path)
    path.write_text(result(1, "4SX", "W", r" 2\s   10\n", 6, 6).replace('[Auction "N"]', '[Dealer "N"]\n[Auction "E"]'))
    with pytest.raises(InputError, match=r"board 1: Auction 'E': a Results auction starts at the dealer N"):
        facit.read_results(path)


def test_a_bad_results_contract_names_file_board_and_field(tmp_path):
    path = tmp_path / "results.pbn"
    path.write_text(result(3, "4Z", "S", r" 6N   10\n", 0, 0))
    with pytest.raises(InputError, match=r"results.pbn: board 3: Contract '4Z' is not a contract"):
        facit.read_results(path)


# ---------------------------------------------------------------- the robots' Results files

# Each Results file -> the Challenges file holding its problems (None: scored by its own Score Table).
PROBLEM_FILE = {
    "BW-Result.pbn": "BW", "BW-Result8663.pbn": "BW", "BW_INT-BEN3.pbn": "BW",
    "BW2-Result8663.pbn": "BW2", "BW2_INT-BEN3.pbn": "BW2",
    "CTC050620-BEN3.pbn": "CTC_mayjun20", "CTC_mayjun20-GIB-BBO-8712.pbn": "CTC_mayjun20",
    "CTC_mayjun20-GIB-BBO-8728.pbn": "CTC_mayjun20", "CTC_mayjun20-GIB-BBO-8730.pbn": "CTC_mayjun20",
    "CTC_mayjun20-GIB-BBO-8734.pbn": "CTC_mayjun20", "CTC_mayjun20-Result8663.pbn": "CTC_mayjun20",
    "CTC_mayjun20-Result8663NoBiddingInfo.pbn": "CTC_mayjun20",
    "oct13_feb23_nov23_jun24-BBA8663.pbn": "oct13_feb23_nov23_jun24",
    "oct13_feb23_nov23_jun24-Result8663.pbn": "oct13_feb23_nov23_jun24",
    "oct13_feb23_nov23_jun24_BBA8663.pbn": "oct13_feb23_nov23_jun24",
    "oct13_jun24-BEN3.pbn": "oct13_feb23_nov23_jun24",
    # BW2's 40 deals in BW2's order, but BEN's name for it says CTC and the issue scores it by its
    # embedded tables; its board 18 was bid with an older BW2 table (KNOWN_TABLE_DIFFERENCES).
    "CTC2-muppv2.pbn": None,
}

# (Results file, board) -> why its final contract scored with the problem's table is not the
# file's Facit Score. None: every board of every file reproduces.
KNOWN_SCORE_DISAGREEMENTS: dict[tuple[str, int], str] = {}

# (Results file, board) -> why its embedded Score Table is not its problem file's table (for
# CTC2-muppv2: BW2's). The problem files were edited after these runs; the file's Facit Score
# follows the table it was bid with, and where the edit changes nothing for its contract, the
# problem's table reproduces it too.
KNOWN_TABLE_DIFFERENCES = {
    ("BW-Result.pbn", 18): "BW.pbn later wrote declarer letters: E2HP, E2HX were 2HP, 2HX (3N by N scores 4 with both)",
    ("BW-Result.pbn", 33): "BW.pbn later made W4SP (never matching) of 4S (5H by N scores 10 with both)",
    ("CTC2-muppv2.pbn", 18): "BW2.pbn later made 5N 4 of 3N 4: its 5N by S scored 0, which BW2's table now gives 4",
}
BOARDS_IN_RESULTS = 521  # 17 files: 9 of 40 boards, 7 of 20, 1 of 1


def results_folder(shared_dir: Path) -> Path:
    return shared_dir / "data/challenges/lorserker_ben/Challenges/Results"


def hands(deal: str) -> dict[str, str]:
    """'N:AK.. ..' -> {'N': 'AK..', 'E': ...}: the seats' hands, whichever seat the text starts with."""
    first, text = deal.split(":")
    start = "NESW".index(first.upper())
    return {"NESW"[(start + offset) % 4]: hand for offset, hand in enumerate(text.split())}


def auction_contracts(path: Path) -> dict[int, tuple]:
    """Board -> (level, strain, doubled, declarer) of its auction, read and checked by the ingest's
    PBN reader and validator."""
    contracts = {}
    for record in pbn.parse_pbn(path.read_bytes(), str(path)):
        record = validate.check(record) if isinstance(record, BoardRecord) else record
        assert isinstance(record, BoardRecord), f"{path.name}: {record}"
        contracts[record.board] = (record.contract_level, record.contract_strain, record.contract_doubled,
                                   record.declarer)
    return contracts


def auction_names(path: Path) -> dict[int, tuple[str, ...]]:
    """Board -> its auction's call names as the ingest's PBN reader reads them."""
    return {record.board: tuple(call_name(call) for call in record.auction)
            for record in pbn.parse_pbn(path.read_bytes(), str(path))}


def test_every_results_file_is_listed(shared_dir):
    assert sorted(path.name for path in results_folder(shared_dir).glob("*.pbn")) == sorted(PROBLEM_FILE)


@pytest.mark.parametrize("name", sorted(PROBLEM_FILE))
def test_the_scorer_reproduces_the_robots(shared_dir, name):
    path = results_folder(shared_dir) / name
    boards = facit.read_results(path)
    problems = ({} if PROBLEM_FILE[name] is None else
                {problem.board: problem for problem in facit.read_problems(path.parents[1] / f"{PROBLEM_FILE[name]}.pbn")})
    assert [board.running_score for board in boards] == list(accumulate(board.facit_score for board in boards))
    assert auction_contracts(path) == {board.board: (board.level, board.strain, board.doubled, board.declarer)
                                       for board in boards}
    assert auction_names(path) == {board.board: board.auction for board in boards}
    disagreements, table_differences = set(), set()
    for board in boards:
        problem = problems.get(board.board)
        if problems:
            assert hands(problem.deal) == hands(board.deal), f"{name} board {board.board}: another deal"
        scored = facit.award_points(problem.table if problem else board.table, board.level, board.strain,
                                    board.doubled, board.declarer)
        assert facit.award_points(board.table, board.level, board.strain, board.doubled,
                                  board.declarer) == board.facit_score, f"{name} board {board.board}: its own table"
        if scored != board.facit_score:
            disagreements.add((name, board.board))
        if problem and problem.table != board.table:
            table_differences.add((name, board.board))
    assert disagreements == {key for key in KNOWN_SCORE_DISAGREEMENTS if key[0] == name}
    assert table_differences == {key for key in KNOWN_TABLE_DIFFERENCES if key[0] == name and PROBLEM_FILE[name]}


def test_ctc2_muppv2_holds_bw2_with_one_older_table(shared_dir):
    """The known table difference of the one file scored by its embedded tables, against BW2."""
    boards = facit.read_results(results_folder(shared_dir) / "CTC2-muppv2.pbn")
    bw2 = facit.read_problems(results_folder(shared_dir).parent / "BW2.pbn")
    assert [hands(board.deal) for board in boards] == [hands(problem.deal) for problem in bw2]
    assert {("CTC2-muppv2.pbn", board.board) for board, problem in zip(boards, bw2) if board.table != problem.table} == {
        key for key in KNOWN_TABLE_DIFFERENCES if key[0] == "CTC2-muppv2.pbn"}


def test_every_board_of_the_results_is_read(shared_dir):
    assert sum(len(facit.read_results(results_folder(shared_dir) / name)) for name in PROBLEM_FILE) == BOARDS_IN_RESULTS
