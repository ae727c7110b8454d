"""Ingest keeps what BEN's Challenges files carry (docs/conventions.md, "Bidding problems (Facit)"): each
problem's award table and its script with the `AC` places, read by dataset/facit.py's parsers as
`bridgeflow challenge` reads them, in columns of their own that nothing reading `auction` takes
for a board played. The real files through the whole ingest and catalog; the edge cases on small
files written here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset import catalog, facit, pbn, pbn_writer, schema
from bridgeflow.dataset.encodings import parse_call
from bridgeflow.dataset.record import BoardRecord, Reason, Rejected
from bridgeflow.dataset.validate import check
from bridgeflow.pipelines import ingest
from bridgeflow.training.bidding import bsm_data

from test_facit import UNREADABLE, challenge_files

CHALLENGES = "data/challenges/lorserker_ben/Challenges"
# Problems per file, and how many of them are scripted, counted by facit.read_problems.
PROBLEMS = {"BW.pbn": 40, "BW2.pbn": 40, "CTC_mayjun20.pbn": 20, "oct13_feb23_nov23_jun24.pbn": 40}
SCRIPTED = {"BW.pbn": 8, "BW2.pbn": 8, "CTC_mayjun20.pbn": 4, "oct13_feb23_nov23_jun24.pbn": 10}
OTHER_BOARDS = 50  # aug_sep_jan_feb (40) and martens_declarer_first10 (10): deals without a table
ROBOT_BOARDS = 521  # the 17 Results files: auctions played by the robots (tests/test_facit.py)


def table_pairs(table: facit.Table) -> list[tuple[str, int]]:
    return [(award.contract, award.points) for award in table]


def script_calls(text: str) -> list[int]:
    """'1D AC 2D AC P' as a stored script: call indices, -1 at each AC."""
    return [-1 if word == "AC" else parse_call(word) for word in text.split()]


def rows(folder: Path) -> list[dict]:
    """The records of an ingest's `folder`, each with its source file's `name`."""
    table = pa.concat_tables(pq.read_table(path) for path in sorted(folder.glob("*.parquet")))
    return [row | {"name": Path(row["source_file"]).name} for row in table.to_pylist()]


@pytest.fixture(scope="module")
def challenges(shared_dir: Path) -> Path:
    return shared_dir / CHALLENGES


@pytest.fixture(scope="module")
def ingested(challenges: Path, tmp_path_factory) -> tuple[dict, Path]:
    """The problem files and the robots' Results files ingested, and the catalog over them."""
    out = tmp_path_factory.mktemp("challenges")
    manifest = ingest.run(["--input", str(challenges / "*.pbn"), "--input", str(challenges / "Results" / "*.pbn"),
                           "--out", str(out / "ingest"), "--workers", "2"])
    catalog.run(["--records", str(out / "ingest/records"), "--quarantine", str(out / "ingest/quarantine"),
                 "--out", str(out / "bridge.duckdb")])
    return manifest, out


def test_every_problem_is_kept_with_facits_table_and_script(ingested, challenges):
    manifest, out = ingested
    assert (manifest["accepted"], manifest["quarantined"]) == (sum(PROBLEMS.values()) + OTHER_BOARDS + ROBOT_BOARDS, 0)
    records = rows(out / "ingest/records")
    for name, count in PROBLEMS.items():
        kept = sorted((row for row in records if row["name"] == name), key=lambda row: row["source_position"])
        problems = facit.read_problems(challenges / name).problems
        assert len(kept) == len(problems) == count
        for row, problem in zip(kept, problems):
            assert (row["board"], row["dealer"], row["vulnerability"]) == (problem.board, problem.dealer,
                                                                           problem.vulnerability)
            assert [(award["contract"], award["points"]) for award in row["award_table"]] == table_pairs(problem.table)
            assert row["problem_script"] == (facit.script_indices(problem.script) or None), f"{name} {row['board']}"
        scripts = [row["problem_script"] for row in kept if row["problem_script"] is not None]
        assert len(scripts) == SCRIPTED[name] and all(facit.OUR_CALL_INDEX in script for script in scripts)
    assert sum(row["award_table"] is not None for row in records) == sum(PROBLEMS.values())


def test_the_files_oddities(ingested):
    """oct13_feb23_nov23_jun24 board 10's `{` never closes (board 11 is still read), board 11's
    script goes on after an AC on a second line under `[Auction "E"]`; BW2 writes points first."""
    _, out = ingested
    by_board = {(row["name"], row["board"]): row for row in rows(out / "ingest/records")}
    oct13 = "oct13_feb23_nov23_jun24.pbn"
    assert by_board[oct13, 10]["award_table"][:2] == [{"contract": "2D", "points": 10}, {"contract": "3C", "points": 9}]
    assert len(by_board[oct13, 10]["award_table"]) == 6
    assert ("Hidden", "EW") in by_board[oct13, 10]["tags"]  # a tag after the unclosed table
    assert by_board[oct13, 11]["award_table"][0] == {"contract": "6S", "points": 10}
    assert by_board[oct13, 11]["problem_script"] == script_calls("1D AC 2D AC P")
    assert by_board[oct13, 4]["problem_script"] == script_calls("P AC 2S AC P")  # dealer W, script from N
    assert by_board["BW.pbn", 26]["problem_script"] == script_calls("1C 2S AC P")  # our side's own call
    assert by_board["BW2.pbn", 1]["award_table"][:2] == [{"contract": "4H", "points": 10},
                                                         {"contract": "5H", "points": 7}]


def test_problems_are_not_boards_played(ingested):
    """No problem has an auction, contract or result, so the BSM's training data (bsm_data) reads
    the robots' 521 auctions and no script."""
    _, out = ingested
    problems = [row for row in rows(out / "ingest/records") if row["award_table"] is not None]
    assert all(row[column] is None for row in problems for column in
               ("auction", "auction_complete", "contract", "contract_level", "declarer", "tricks", "score_ns"))
    read = [bsm_data._read_auctions(path) for path in sorted((out / "ingest/records").glob("*.parquet"))]
    assert sum(len(part["length"]) for part in read) == ROBOT_BOARDS


def test_the_catalog_lists_problems_with_their_top_award(ingested):
    _, out = ingested
    with duckdb.connect(str(out / "bridge.duckdb"), read_only=True) as db:
        assert db.execute("SELECT count(*), count(*) FILTER (WHERE scripted) FROM problems").fetchone() == (
            sum(PROBLEMS.values()), sum(SCRIPTED.values()))
        assert db.execute("SELECT top_points, top_contracts, script FROM problems "
                          "WHERE source_file LIKE '%/oct13_feb23_nov23_jun24.pbn' AND board = 11").fetchone() == (
            10, "6S", "1D AC 2D AC P")
        assert db.execute("SELECT top_contracts, script FROM problems WHERE source_file LIKE '%/BW2.pbn' AND board = 1"
                          ).fetchone() == ("4H", None)
        # the robots played the problems' deals: tables, and the problems counted apart
        assert db.execute("SELECT sum(tables), sum(problems) FROM deals").fetchone() == (
            ROBOT_BOARDS + OTHER_BOARDS, sum(PROBLEMS.values()))
        assert db.execute("SELECT count(*) FROM deals WHERE problems > 0 AND tables > 0").fetchone()[0] == sum(
            PROBLEMS.values())


# ---------------------------------------------------------------- edge cases, on files written here

DEAL = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"


def problem_game(board: int, dealer: str, table: str, auction: str = "", scoring: str = "Facit") -> str:
    return (f'[Event ""]\n[Board "{board}"]\n[Dealer "{dealer}"]\n[Vulnerable "None"]\n[Deal "{DEAL}"]\n'
            f'[Scoring "{scoring}"]\n' + (f"{table}\n" if table else "")
            + f'[Declarer ""]\n[Contract ""]\n[Result ""]\n{auction}')


def read(path: Path) -> list[BoardRecord | Rejected]:
    items = pbn.parse_pbn(path.read_bytes(), path.name)
    return [check(item) if isinstance(item, BoardRecord) else item for item in items]


# A points-first file with BEN's oddities: a table over several lines, a `{` that never closes,
# spaced Auction tags, our side's own call, calls after an AC, a script named for another seat
# than its dealer, AP and a note reference.
ODD_GAMES = [
    problem_game(1, "N", "{\n10\n4H\n7\n3H\n}"),
    problem_game(2, "E", "{ 10 2D 9 3C 4 E3CX ", '[ Auction "E"]\n1D AC 2D AC\nPass\n'),
    problem_game(3, "S", "{10 3N 8 S6N}", '[Auction "S" ]\n1C 2S AC P\n'),
    problem_game(4, "N", "{10 4S 2 W4SP}", '[Auction "W"]\nAC 1H AC\n'),
    problem_game(5, "W", "{10 3N}", '[Auction "W"]\n1NT =1= AC AP\n[Note "1:15-17"]\n'),
]
ODD_EXPECTED = [
    (1, [("4H", 10), ("3H", 7)], None),
    (2, [("2D", 10), ("3C", 9), ("E3CX", 4)], script_calls("1D AC 2D AC P")),
    (3, [("3N", 10), ("S6N", 8)], script_calls("1C 2S AC P")),
    (4, [("4S", 10), ("W4SP", 2)], script_calls("AC 1H AC")),
    (5, [("3N", 10)], script_calls("1NT AC P P P")),
]


@pytest.fixture
def odd_file(tmp_path: Path) -> Path:
    path = tmp_path / "odd.pbn"
    path.write_text("% PBN 2.1\n" + "\n".join(ODD_GAMES))
    return path


def test_the_oddities_are_read_as_facit_reads_them(odd_file):
    records = read(odd_file)
    assert all(isinstance(record, BoardRecord) for record in records), records
    assert [(record.board, record.award_table, record.problem_script) for record in records] == ODD_EXPECTED
    assert [(problem.board, table_pairs(problem.table), facit.script_indices(problem.script) or None)
            for problem in facit.read_problems(odd_file).problems] == ODD_EXPECTED
    assert all(record.auction is None and record.contract_level is None for record in records)


def test_the_oddities_through_the_ingest(odd_file, tmp_path):
    manifest = ingest.run(["--input", str(odd_file), "--out", str(tmp_path / "out"), "--workers", "1"])
    assert (manifest["accepted"], manifest["quarantined"]) == (len(ODD_GAMES), 0)
    written = sorted(rows(tmp_path / "out/records"), key=lambda row: row["board"])
    assert [(row["board"], [(award["contract"], award["points"]) for award in row["award_table"]],
             row["problem_script"]) for row in written] == ODD_EXPECTED
    assert pq.read_schema(next((tmp_path / "out/records").glob("*.parquet"))).field("award_table").type == pa.list_(
        schema.AWARD)


def test_a_pair_order_is_the_files_not_the_tables(tmp_path):
    """The file's first table decides: in a contract-first file `{10 4H}` is an error, not points first."""
    path = tmp_path / "order.pbn"
    path.write_text("\n".join([problem_game(1, "N", "{4H 10}"), problem_game(2, "N", "{10 4H}")]))
    first, second = read(path)
    assert first.award_table == [("4H", 10)]
    assert isinstance(second, Rejected) and (second.reason, second.field) == (Reason.SYNTAX, "Scoring")
    assert second.message == "award table: points '4H' for '10' are not a whole number"


def test_the_duckdb_cli_lists_the_problems(ingested):
    """The view and its macro read in the 1.5 CLI too (its lambdas and struct fields)."""
    _, out = ingested
    query = ("SELECT board, coalesce(script, '-') AS script, top_contracts FROM problems "
             "WHERE source_file LIKE '%/BW.pbn' AND board IN (3, 8) ORDER BY board")
    result = subprocess.run([str(Path(sys.executable).with_name("duckdb")), "-readonly", "-csv",
                             str(out / "bridge.duckdb"), "-c", query], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["board,script,top_contracts", "3,1H AC P,7S", "8,-,S6N"]


def test_a_file_in_pieces_reads_its_tables_in_the_files_order():
    """Each piece of a split file (pbn.range_starts) starts with the file's pair order: a piece's
    first board writing `{10 4H}` is an error there as in the whole contract-first file."""
    def problems(bad: int | None) -> bytes:
        return "\n".join(problem_game(board, "N", "{10 4H}" if board == bad else "{4H 10}")
                         for board in range(1, 41)).encode()

    def outcomes(items) -> list:
        return [(item.board, item.award_table) if isinstance(item, BoardRecord) else item.message for item in items]

    starts = pbn.range_starts([problems(None)], 1000)
    bad = starts[2][2] + 1  # the board a piece starts with
    data = problems(bad)
    assert len(starts) > 3 and pbn.range_starts([data], 1000) == starts
    pieces = []
    for (start, _, _, carried), end in zip([(0, 1, 0, None)] + starts, [start[0] for start in starts] + [len(data)]):
        pieces += outcomes(pbn.parse_pbn(data[start:end], "f.pbn", carried))
    whole = outcomes(pbn.parse_pbn(data, "f.pbn"))
    assert pieces == whole and whole[bad - 1] == "award table: points '4H' for '10' are not a whole number"


@pytest.mark.parametrize("game, reason, field, message", [
    (problem_game(1, "N", "{4H 10 4X 7}"), Reason.SYNTAX, "Scoring", "award table: not a contract: '4X'"),
    (problem_game(1, "N", "{4H 10 3H}"), Reason.SYNTAX, "Scoring",
     "award table: 3 words, not (contract, points) pairs"),
    (problem_game(1, "E", "{4H 10}", '[Auction "E"]\nAC 1H\n'), Reason.SYNTAX, "Auction",
     "an AC falls on East or West whether the calls start at E or at the dealer E"),
    (problem_game(1, "N", "{4H 10}", '[Auction "N"]\nAC 1Z\n'), Reason.SYNTAX, "Auction",
     "'1Z' is neither a call nor AC"),
    (problem_game(1, "", "{4H 10}", '[Auction "N"]\nAC 1H\n'), Reason.UNKNOWN_VALUE, "Auction",
     "a problem's script needs the seat of [Auction] and a [Dealer]"),
    # an AC without a table is no problem's: not a call, as in any other auction
    (problem_game(1, "N", "", '[Auction "N"]\nAC 1H\n', scoring="IMP"), Reason.SYNTAX, "Auction", "'AC' is not a call"),
])
def test_a_bad_problem_is_quarantined_naming_its_field(tmp_path, game, reason, field, message):
    path = tmp_path / "bad.pbn"
    path.write_text(game + "\n" + problem_game(2, "N", "{4H 10}"))
    bad, good = read(path)
    assert isinstance(bad, Rejected) and (bad.reason, bad.field) == (reason, field)
    assert bad.message.startswith(message), bad.message
    assert isinstance(good, BoardRecord) and good.award_table == [("4H", 10)]


def test_only_a_facit_table_ends_at_the_next_tag(tmp_path):
    """Any other unterminated comment still rejects its game (and only it)."""
    path = tmp_path / "comments.pbn"
    path.write_text("\n".join([problem_game(1, "N", "{ a note that never closes", scoring="IMP"),
                               problem_game(2, "N", "{4H 10}")]))
    bad, good = read(path)
    assert isinstance(bad, Rejected) and (bad.reason, bad.field) == (Reason.SYNTAX, "Scoring")
    assert bad.message.startswith("unterminated comment on line 7")
    assert good.award_table == [("4H", 10)]


def test_a_robots_results_board_is_a_board_played(tmp_path):
    """A Results file's board: [Scoring "Facit"], the robot's auction, its Score Table in a comment
    after the auction: an auction, no table."""
    path = tmp_path / "results.pbn"
    path.write_text(f'[Board "1"]\n[Dealer "N"]\n[Vulnerable "None"]\n[Deal "{DEAL}"]\n[Scoring "Facit"]\n'
                    '[Declarer "N"]\n[Contract "1S"]\n[Auction "N"]\n1S Pass Pass Pass\n{Score Table:\\n 1S 10\\n}\n')
    record, = read(path)
    assert (record.auction, record.award_table, record.problem_script) == (script_calls("1S P P P"), None, None)


def test_a_problem_writes_and_reads_back(odd_file):
    records = read(odd_file)
    again = [check(item) for item in pbn.parse_pbn("\n".join(pbn_writer.format_pbn(record) for record in records).encode(),
                                                   "odd.pbn")]
    assert [(record.board, record.dealer, record.award_table, record.problem_script) for record in again] == [
        (record.board, record.dealer, record.award_table, record.problem_script) for record in records]
    np.testing.assert_array_equal(again[0].owner, records[0].owner)


@pytest.mark.parametrize("fields, message", [
    ({"scoring": "IMP", "award_table": [("4H", 10)]}, 'an award table needs \\[Scoring "Facit"\\]'),
    ({"scoring": "Facit", "award_table": [("4H", 10)], "problem_script": [-1]}, "a problem's script needs a dealer"),
    ({"dealer": 0, "problem_script": [-1]}, "a problem's script needs a dealer and an award table"),
])
def test_a_problem_that_would_not_read_back_is_not_written(fields, message):
    with pytest.raises(ValueError, match=message):
        pbn_writer.format_pbn(BoardRecord("f.pbn", "pbn", 0, 1, **fields))


def test_the_ingest_and_the_challenge_read_damaged_problem_files_alike(shared_dir, tmp_path):
    """One reader: on BEN's files with typos (tests/test_facit.py TYPOS, UNREADABLE) each problem
    the challenge reads is the ingest's record, with the same repairs; each game the ingest
    quarantines is a problem the challenge skips; the rest of what it skips it accepts as records."""
    files, _ = challenge_files(shared_dir, tmp_path / "typos", typos=True)
    for path in files:
        read = facit.read_problems(path)
        records = read_records(path)
        accepted = [item for item in records if isinstance(item, BoardRecord) and item.award_table is not None]
        assert [(problem.board, table_pairs(problem.table), facit.script_indices(problem.script) or None,
                 list(problem.repairs)) for problem in read.problems] == [
            (record.board, record.award_table, record.problem_script, [repair.value for repair in record.repairs])
            for record in accepted if record.board not in {item.board for item in read.skipped}]
        quarantined = {item.source_line for item in records if isinstance(item, Rejected)}
        assert quarantined <= {item.line for item in read.skipped}
        assert len(quarantined) == sum(name == path.name and not reason.startswith("Deal")
                                       for name, _, _, _, reason in UNREADABLE)


def read_records(path: Path) -> list[BoardRecord | Rejected]:
    return [check(item) if isinstance(item, BoardRecord) else item for item in pbn.parse_pbn(path.read_bytes(), str(path))]


def test_a_comment_after_the_deal_is_a_table_only_in_a_game_without_scoring_that_reads_as_one(tmp_path):
    """[Scoring] left out before `{4H 10}`: a problem, repaired (with its script); a note there, an
    auction played (no AC), or any comment when [Scoring] names another scoring, leaves a plain deal."""
    path = tmp_path / "deals.pbn"
    path.write_text("\n".join([problem_game(1, "N", "{4H 10}", '[Auction "N"]\nAC 1S AC\n').replace(
                                   '[Scoring "Facit"]\n', ""),
                               problem_game(2, "N", "{4H made}").replace('[Scoring "Facit"]\n', ""),
                               problem_game(3, "N", "{4H 10}", scoring="IMP"),
                               problem_game(4, "N", "{a note}\n{4H 10}", scoring="FACIT "),
                               problem_game(5, "N", "{4H 10}", '[Auction "N"]\n1H P 4H AP\n').replace(
                                   '[Scoring "Facit"]\n', "")]))
    records = read(path)
    assert [(record.board, record.scoring, record.award_table, [repair.value for repair in record.repairs])
            for record in records] == [
        (1, "Facit", [("4H", 10)], ["facit_scoring_missing"]), (2, None, None, []), (3, "IMP", None, []),
        (4, "Facit", [("4H", 10)], ["facit_scoring_case", "facit_note_before_table"]), (5, None, None, [])]
    assert records[0].problem_script == script_calls("AC 1S AC") and records[4].auction == script_calls("1H P 4H P P P")
