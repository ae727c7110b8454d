"""`bridgeflow report`: the HTML board viewer of evaluate, challenge, generation and selfplay runs,
built from the run's own files (each verb writes it too), its escaping of file text, the parts a
run lacks, its CLI errors, and the page itself in headless Chromium (DOM, sorting, a screenshot)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.cli import main
from bridgeflow.dataset.encodings import call_name, deal_id, hand_to_pbn, hands_from_owner, random_owner
from bridgeflow.dataset.labels import dd_store_table
from bridgeflow.dataset.lin import parse_lin
from bridgeflow.training.evaluation import board_report, challenge, generation
from bridgeflow.training.evaluation import evaluate as ev
from bridgeflow.training.evaluation.boards import load_boards
from bridgeflow.training.evaluation.challenge_report import summary_lines
from bridgeflow.training.evaluation.headless import Chromium

torch.set_num_threads(1)
SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
SCRIPT_NAME = "<script>window.injected = 1</script>"
ALERT_NOTE = "<b>15+</b> & more"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A DD store of 6 test-split deals (random tables: only scoring reads them)."""
    folder = tmp_path_factory.mktemp("dd")
    owners = [owner for owner in (random_owner(21, index) for index in range(200)) if deal_id(owner) % 100 >= 90][:6]
    tables = np.random.default_rng(1).integers(0, 14, (len(owners), 4, 5))
    pq.write_table(dd_store_table(np.array([deal_id(o) for o in owners], np.uint64), np.stack(owners), tables),
                   folder / "labels.parquet")
    return folder


@pytest.fixture(scope="module")
def match(store, models, tmp_path_factory):
    """A small evaluate run (4 boards, a team and a partner match): its folder, as `evaluate` left it."""
    out = tmp_path_factory.mktemp("eval")
    ev.run(["--dd", str(store), "--bsm", str(models), "--nndda", str(models), "--out", str(out),
            "--params", os.devnull, "--set", "boards=4", "--set", "matches=[rule:bsm, partner:rule+bsm]"])
    return out


@pytest.fixture(scope="module")
def browser(chromium):
    with Chromium() as page:
        yield page


def displayed(call: str) -> str:
    """A call as the page shows it: 'Pass', '1\u2660', '3NT'."""
    return "Pass" if call == "P" else call[0] + SUIT_SYMBOLS[call[1]] + call[2:] if call[1:2] in SUIT_SYMBOLS else call


def hand_lines(cards) -> list[str]:
    """A hand as the diagram's four lines: '\u2660K 10 6 3' (a void is a dash)."""
    holdings = hand_to_pbn(cards).split(".")
    return [symbol + (" ".join("10" if rank == "T" else rank for rank in holding) or "\u2014")
            for symbol, holding in zip(SUIT_SYMBOLS.values(), holdings)]


def test_every_board_of_a_match_with_its_hands_auctions_and_results(match, store):
    data = board_report.read_run(match)
    rows = pq.read_table(match / "boards.parquet").to_pylist()
    boards = load_boards(store, 4)
    assert data["kind"] == "evaluate" and len(data["boards"]) == len(rows) == 8
    for row, board in zip(rows, data["boards"]):
        owner = boards.owners[row["board"] - 1]
        assert (board["group"], board["board"], board["dealer"], board["vul"]) == (row["match"], row["board"], row["dealer"], row["vul"])
        assert board["hands"] == [hand_to_pbn(cards) for cards in hands_from_owner(owner)]
        assert board["dd"] == boards.tables[row["board"] - 1].reshape(-1).tolist()
        assert board["imps"] == row["imps"] and len(board["tables"]) == len(row["auctions"])
        for table, calls, tricks, score in zip(board["tables"], row["auctions"], row["tricks"], row["scores_ns"]):
            assert table["calls"] == [call_name(call) for call in calls]
            assert (table["tricks"], table["score_ns"]) == (tricks, score)
            assert (table["contract"] if table["contract"] == "Pass" else f"{table['contract']}-{'NESW'[table['declarer']]}") \
                in row["contracts"]
            (record,) = parse_lin(table["lin"].encode(), "x.lin")  # the BBO link's LIN reads back to the table
            assert record.owner.tolist() == owner.tolist() and record.auction == list(calls)
            assert (record.dealer, record.vulnerability, record.board) == (row["dealer"], row["vul"], row["board"])
    team = data["boards"][0]["tables"]
    assert [table["name"] for table in team] == ["Open", "Closed"] and team[0]["seats"] == ["rule", "bsm", "rule", "bsm"]
    assert [block["rows"][0][0] for block in data["summary"][:1]] == ["rule:bsm"]
    metrics = json.loads((match / "metrics.json").read_text())["matches"]["rule:bsm"]
    assert data["summary"][0]["rows"][0] == ["rule:bsm", f"{metrics['mean_imps']:+.2f}", f"{metrics['se']:.2f}",
                                             f"[{metrics['ci95'][0]:+.2f}, {metrics['ci95'][1]:+.2f}]", 4]


def with_hostile_text(folder: Path, tmp_path: Path) -> Path:
    """A copy of an evaluate run whose first game names North `<script>...` and alerts its second
    call with a note holding markup, as a real PBN file may."""
    copy = tmp_path / "hostile"
    copy.mkdir()
    for name in ("boards.parquet", "metrics.json"):
        (copy / name).write_bytes((folder / name).read_bytes())
    text = (folder / "matches.pbn").read_text()  # the first [North], [Auction] and [DoubleDummyTricks] are game 1's
    text = re.sub(r'\[North "[^"]*"\]', f'[North "{SCRIPT_NAME}"]', text, count=1)
    text = re.sub(r'(\[Auction "[NESW]"\]\n\S+ \S+)', r"\1! =1=", text, count=1)
    text = text.replace("[DoubleDummyTricks", f'[Note "1:{ALERT_NOTE}"]\n[DoubleDummyTricks', 1)
    (copy / "matches.pbn").write_text(text)
    return copy


def test_text_from_files_cannot_become_markup(match, tmp_path):
    html = (board_report.write_report(with_hostile_text(match, tmp_path))).read_text()
    assert "<script>window" not in html and "<b>15+" not in html  # only as \u escapes in the JSON
    embedded = html.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    board = json.loads(embedded)["boards"][0]
    assert board["tables"][0]["seats"][0] == SCRIPT_NAME
    assert board["tables"][0]["alerts"][1] == ALERT_NOTE and board["tables"][0]["alerts"][0] is None


def test_a_run_missing_optional_parts_renders_without_them(match, tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    table = pq.read_table(match / "boards.parquet")
    pq.write_table(table.drop_columns(["tricks", "scores_ns"]), old / "boards.parquet")  # no matches.pbn, no metrics.json
    data = board_report.read_run(old)
    notes = " ".join(data["notes"])
    assert "matches.pbn is missing: no hands" in notes and "metrics.json is missing" in notes
    assert "boards.parquet has no tricks, scores_ns columns" in notes
    board = data["boards"][0]
    assert board["hands"] is None and "dd" not in board and board["tables"][0]["seats"] == ["rule", "bsm", "rule", "bsm"]
    assert "tricks" not in board["tables"][0] and "score_ns" not in board["tables"][0] and "lin" not in board["tables"][0]
    by_match = [row["imps"] for row in table.to_pylist() if row["match"] == "rule:bsm"]
    assert data["summary"][0]["rows"][0][1] == f"{np.mean(by_match):+.2f}"  # the summary from the log's IMPs


@pytest.mark.parametrize("make, named", [(lambda tmp: tmp / "absent", "no such file or folder"),
                                         (lambda tmp: tmp, "not a run"),
                                         (lambda tmp: tmp / "notes.txt", "not a folder")],
                         ids=["missing", "not-a-run", "a-file"])
def test_a_folder_that_is_not_a_run_is_a_one_line_error(tmp_path, capsys, make, named):
    (tmp_path / "notes.txt").write_text("hello")
    assert main(["report", str(make(tmp_path)), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bridgeflow report: error: ") and named in err and err.count("\n") == 1, err
    assert not (tmp_path / "r.html").exists()


def test_the_verb_writes_the_page_where_asked(match, tmp_path, capsys):
    assert main(["report", str(match), "--out", str(tmp_path / "board.html")]) == 0
    assert "8 boards" in capsys.readouterr().out
    assert (tmp_path / "board.html").read_text() == (match / "report.html").read_text()  # as evaluate wrote it


def test_the_verb_saves_a_screenshot(match, chromium, tmp_path):
    assert main(["report", str(match), "--out", str(tmp_path / "board.html"), "--screenshot", str(tmp_path / "page.png")]) == 0
    png = (tmp_path / "page.png").read_bytes()
    assert png.startswith(b"\x89PNG") and int.from_bytes(png[16:20], "big") == 1400  # the page's width


def test_the_page_in_chromium(match, store, browser, tmp_path):
    """Board count, a known board's hands and auctions, sorting by a header, paging, a screenshot."""
    data = board_report.read_run(match)
    browser.open(match / "report.html")
    assert browser.errors == []
    assert browser.evaluate("performance.getEntriesByType('resource').length") == 0  # nothing fetched: self-contained
    assert browser.evaluate("document.getElementById('board-count').textContent") == "(8)"
    assert browser.evaluate("document.querySelectorAll('#board-list tbody tr').length") == 8
    browser.evaluate("showBoard('rule:bsm/2')")
    assert browser.evaluate("location.hash") == "#rule%3Absm%2F2"  # the address names the board shown
    board = next(board for board in data["boards"] if board["key"] == "rule:bsm/2")
    owner = load_boards(store, 4).owners[1]
    for seat, cards in zip("NESW", hands_from_owner(owner)):
        shown = browser.evaluate(f"[...document.querySelectorAll('.hand[data-seat={seat}] .suit')].map(e => e.textContent)")
        assert shown == hand_lines(cards)
    for table in board["tables"]:
        cells = browser.evaluate(f"[...document.querySelectorAll('.table[data-table={table['name']}] table.auction td')]"
                                 f".map(e => e.textContent).filter(Boolean)")
        assert cells == [displayed(call) for call in table["calls"]]
        first_cell = browser.evaluate(f"[...document.querySelectorAll('.table[data-table={table['name']}] table.auction "
                                      f"tbody tr:first-child td')].findIndex(e => e.textContent)")
        assert first_cell == [3, 0, 1, 2].index(board["dealer"])  # West North East South, the first call under the dealer
        link = browser.evaluate(f"document.querySelector('.table[data-table={table['name']}] a.lin-link').href")
        assert urlparse(link).netloc == "www.bridgebase.com" and parse_qs(urlparse(link).query)["lin"] == [table["lin"]]
    order = "[...document.querySelectorAll('#board-list tbody tr')].map(e => e.dataset.key)"
    before = browser.evaluate(order)
    browser.evaluate("document.querySelector('#board-list th[data-key=imps]').click()")
    after = browser.evaluate(order)
    imps = {b["key"]: b["imps"] for b in data["boards"]}
    assert after != before and [imps[key] for key in after] == sorted(imps.values(), reverse=True)
    browser.evaluate("document.querySelector('#board-list th[data-key=imps]').click()")
    assert [imps[key] for key in browser.evaluate(order)] == sorted(imps.values())
    browser.evaluate("const s = document.getElementById('filter-group'); s.value = 'partner:rule+bsm';"
                     " s.dispatchEvent(new Event('input'))")
    assert browser.evaluate("document.getElementById('board-count').textContent") == "(4 of 8)"
    browser.evaluate("const p = document.getElementById('page-size'); p.innerHTML += '<option>2</option>'; p.value = '2';"
                     " p.dispatchEvent(new Event('input'))")
    assert browser.evaluate("document.getElementById('page').textContent") == "page 1 of 2"
    png = browser.screenshot()
    (tmp_path / "report.png").write_bytes(png)
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_the_address_opens_the_board_it_names(match, browser):
    browser.send("Page.navigate", session=True, url="about:blank")  # a new document: the next load is a full one
    browser.open(match / "report.html", fragment="partner:rule+bsm/3")
    assert browser.evaluate("document.getElementById('board-body').dataset.key") == "partner:rule+bsm/3"
    assert browser.evaluate("document.getElementById('board-title').textContent") == "partner:rule+bsm \u00b7 board 3"


def test_a_script_player_name_shows_as_text_in_chromium(match, browser, tmp_path):
    page = board_report.write_report(with_hostile_text(match, tmp_path))
    browser.open(page)
    assert browser.errors == [] and browser.evaluate("window.injected") is None
    assert browser.evaluate("document.scripts.length") == 2  # the page's data and its code, nothing from a file
    who = browser.evaluate("document.querySelector('.hand[data-seat=N] .who').textContent")
    assert SCRIPT_NAME in who
    alert = browser.evaluate("document.querySelector('.table[data-table=Open] .alert').title")
    note = browser.evaluate("document.querySelector('.table[data-table=Open] .notes-list li').textContent")
    assert alert == note == ALERT_NOTE
    assert browser.evaluate("document.querySelectorAll('b').length") == browser.evaluate(
        "document.querySelectorAll('.compass b').length")  # the only <b> are the page's own


def challenges(shared_dir: Path) -> Path:
    return shared_dir / "data/challenges/lorserker_ben/Challenges"


def test_a_challenge_run_shows_awards_points_and_the_robots_auctions(shared_dir, chromium, tmp_path):
    results = challenges(shared_dir) / "Results" / "CTC_mayjun20-GIB-BBO-8712.pbn"
    metrics = challenge.run(["--problems", str(challenges(shared_dir) / "CTC_mayjun20.pbn"), "--agent", "rule",
                             "--compare", str(results), "--out", str(tmp_path)])
    data = board_report.read_run(tmp_path)
    rows = pq.read_table(tmp_path / "boards.parquet").to_pylist()
    assert data["kind"] == "challenge" and len(data["boards"]) == len(rows) == 20
    theirs = {board["board"]: board for board in metrics["comparisons"][results.stem]["rule"]["per_board"]}
    for row, board in zip(rows, data["boards"]):
        assert board["tables"][0]["calls"] == row["auction"].split() and board["tables"][0]["points"] == row["points"]
        assert board["lost"] == row["top_points"] - row["points"] and board["awards"]
        assert board["robots"][0]["calls"] == theirs[row["board"]]["their_auction"].split()
    assert "\n".join(summary_lines(metrics)) in data["summary"][1]["text"]
    with Chromium() as browser:
        browser.open(tmp_path / "report.html")  # written by the challenge itself
        assert browser.errors == []
        browser.evaluate("showBoard('CTC_mayjun20.pbn/3')")
        board = data["boards"][2]
        awards = browser.evaluate("[...document.querySelectorAll('#awards tbody tr')].length")
        assert awards == len(board["awards"])
        points = browser.evaluate("[...document.querySelectorAll('#agent-points tbody tr')].map(r => r.children[2].textContent)")
        assert points == [str(board["tables"][0]["points"]), str(board["robots"][0]["points"])]
        browser.evaluate("document.querySelector('#board-list th[data-key=lost]').click()")
        lost = browser.evaluate("[...document.querySelectorAll('#board-list tbody tr td:last-child')].map(e => Number(e.textContent))")
        assert lost == sorted((b["lost"] for b in data["boards"]), reverse=True)


def test_a_generation_run_shows_its_matches_and_says_it_keeps_no_boards(store, models, tmp_path):
    generation.run(["--generation", "0", "--agent", f"new=bsm@{models}", "--agent", f"base=bsm@{models}",
                    "--dd", str(store), "--boards", "2", "--out", str(tmp_path)])
    data = board_report.read_run(tmp_path)
    assert (tmp_path / "report.html").exists() and data["kind"] == "generation" and data["boards"] == []
    assert data["summary"][0]["rows"][0][0] == "base:rule" and "no per-board log" in data["notes"][0]
    assert data["summary"][-1]["image"].startswith("data:image/png;base64,")


def test_a_selfplay_run_shows_every_board_and_its_searched_candidates(models, chromium, tmp_path):
    from bridgeflow.pipelines import selfplay

    selfplay.run(["--bsm", str(models), "--generation", "1", "--out", str(tmp_path), "--params", os.devnull,
                  "--workers", "1", "--set", f"nndda={models}", "--set", "deals=2", "--set", "boards_per_task=2",
                  "--set", "search.samples=2", "--set", "search.oversample=1", "--set", "search.topk=2",
                  "--set", "skip_above=1.0"])
    data = board_report.read_run(tmp_path)
    rows = pq.read_table(tmp_path / "decisions").to_pylist()
    assert (tmp_path / "report.html").exists() and data["kind"] == "selfplay" and len(data["boards"]) == 2
    for board in data["boards"]:
        played = sorted((row for row in rows if row["board"] == board["board"]), key=lambda row: row["position"])
        assert board["tables"][0]["calls"] == [call_name(row["call"]) for row in played]
        assert [decision["call"] for decision in board["decisions"]] == [call_name(row["call"]) for row in played]
    searched = [(decision, row) for board in data["boards"] for decision, row in
                zip(board["decisions"], sorted((r for r in rows if r["board"] == board["board"]), key=lambda r: r["position"]))
                if row["searched"]]
    assert searched
    for decision, row in searched:
        assert [candidate[0] for candidate in decision["candidates"]] == [call_name(call) for call in row["candidates"]]
        assert [candidate[2] for candidate in decision["candidates"]] == [round(q, 3) for q in row["q"]]
        assert decision["samples"] == row["samples"] > 0
    with Chromium() as browser:
        browser.open(tmp_path / "report.html")
        assert browser.errors == []
        board = data["boards"][0]
        shown = browser.evaluate("[...document.querySelectorAll('details.decision')].map(d => d.querySelectorAll('tbody tr').length)")
        assert shown == [len(decision["candidates"]) for decision in board["decisions"]]
