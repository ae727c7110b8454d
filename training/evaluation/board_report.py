"""A run's boards as one self-contained HTML page: `bridgeflow report RUN_DIR --out report.html`.

    bridgeflow report data/eval [--out data/eval/report.html] [--screenshot report.png]

Reads only what the run wrote, so old runs render too:
  evaluate    boards.parquet (auctions, contracts, DD tricks, NS scores, IMPs), matches.pbn (hands,
              DD table, players, alerts), metrics.json (the summary with intervals)
  challenge   boards.parquet, the STEM-AGENT.pbn files (deals and award tables), metrics.json
              (totals, paired intervals, the robots' auctions of --compare)
  generation  results.json and history.json (matches, Facit, the loop's history; it keeps no boards)
  selfplay    decisions/ (every call, the searched ones with their candidates) and summary.json
Whatever optional part is missing (a column an older run did not write, a file) is left out and
the page says so in its notes.

The page needs no network: the data is JSON inside it (every `<`, `>` and `&` escaped, so no text
from a file can close the script element) and inline JS builds the DOM with text nodes only, so
a player name or note is text, never markup. It shows the summary, a board list (sortable,
filterable, paged) and per board the hand diagram, each table's auction, the result and a link
to BBO's hand viewer (the LIN from `dataset.lin.format_lin`). `evaluate`, `challenge`,
`generation` and `selfplay` each write report.html beside their other outputs."""

from __future__ import annotations

import argparse
import base64
import json
from collections import defaultdict
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow.parquet as pq

from bridgeflow.dataset.auction import IllegalCall, replay
from bridgeflow.dataset import facit
from bridgeflow.dataset.encodings import SEATS, call_name, hand_to_pbn, hands_from_owner, owner_from_hands, parse_call
from bridgeflow.dataset.errors import InputError, existing
from bridgeflow.dataset.lin import format_lin
from bridgeflow.dataset.pbn import parse_pbn
from bridgeflow.dataset.record import BoardRecord

REPORT_FILE = "report.html"
PAGE_TEMPLATE = Path(__file__).with_name("board_report.html")
DATA_MARK = "/*REPORT_DATA*/"
# The log columns each page reads; the rest are optional (an older run may lack them). The verbs'
# modules (evaluate, challenge) import this one; evaluation modules it uses are imported where used (the
# match kinds bring the agents, and torch, only to the pages that need them).
EVALUATE_COLUMNS = ("match", "board", "dealer", "vul", "auctions", "tricks", "scores_ns", "imps")
CHALLENGE_COLUMNS = ("file", "board", "agent", "kind", "dealer", "vul", "auction", "points", "top_points",
                     "top_contract", "substitutions")


def write_report(folder: str | Path, out: str | Path | None = None) -> Path:
    """Render run folder `folder` to `out` (default: report.html inside it); returns the path."""
    folder = Path(folder)
    out = Path(out) if out is not None else folder / REPORT_FILE
    out.write_text(render(read_run(folder)), encoding="utf-8")
    return out


def read_run(folder: str | Path) -> dict:
    """The page's data for a run folder of any of the four verbs, told apart by what they write."""
    folder = existing(folder, "run folder")
    if not folder.is_dir():
        raise InputError(f"run folder {folder}: not a folder")
    if (folder / "boards.parquet").exists():
        names = pq.read_schema(folder / "boards.parquet").names
        if "match" in names:
            return evaluate_run(folder)
        if "agent" in names and "file" in names:
            return challenge_run(folder)
        raise InputError(f"{folder / 'boards.parquet'}: neither an evaluate log (no `match` column) nor a challenge "
                         f"log (no `file` and `agent` columns)")
    if (folder / "results.json").exists() and (folder / "history.json").exists():
        return generation_run(folder)
    if (folder / "decisions").is_dir() and (folder / "summary.json").exists():
        return selfplay_run(folder)
    raise InputError(f"run folder {folder}: not a run: no boards.parquet (evaluate, challenge), results.json and "
                     f"history.json (generation) or decisions/ and summary.json (selfplay)")


# ---------------------------------------------------------------- what every kind of run shares


def page(kind: str, folder: Path, summary: list[dict], columns: list[dict], boards: list[dict],
         notes: list[str]) -> dict:
    """The page's data: `summary` blocks (a table, a text or an image), the board list's `columns`
    ({key, label, numeric}), the boards and the notes on what the run did not record."""
    return {"kind": kind, "title": f"bridgeflow {kind}: {folder.resolve().name}", "source": str(folder), "notes": notes,
            "summary": summary, "columns": columns, "boards": boards}


def table_block(title: str, header: Sequence[str], rows: list[list]) -> dict:
    return {"title": title, "header": list(header), "rows": rows}


def column(key: str, label: str, numeric: bool = False) -> dict:
    return {"key": key, "label": label, "numeric": numeric}


def read_json(path: Path, notes: list[str], missing: str) -> dict | None:
    """The JSON at `path`, or None with a note `missing` (what the page goes without)."""
    if not path.exists():
        notes.append(f"{path.name} is missing: {missing}.")
        return None
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not JSON: {error}") from None


def read_log(path: Path, wanted: Sequence[str], required: Sequence[str], notes: list[str]) -> list[dict]:
    """boards.parquet's rows, with None for the optional columns an older run did not write (noted)."""
    try:
        table = pq.read_table(path)
    except Exception as error:  # pyarrow raises several kinds for a damaged file
        raise InputError(f"{path}: not a readable Parquet file: {error}") from None
    absent = [name for name in wanted if name not in table.column_names]
    if any(name in required for name in absent):
        raise InputError(f"{path}: no {', '.join(name for name in absent if name in required)} column")
    if absent:
        notes.append(f"{path.name} has no {', '.join(absent)} column{'s' * (len(absent) > 1)}: shown without it.")
    return [{name: row.get(name) for name in wanted} for row in table.to_pylist()]


def table_view(name: str, seats: Sequence[str | None], dealer: int, calls: Sequence[int], **result) -> dict:
    """One table of a board: its seats, calls (names), final contract, whether both sides bid, and
    whatever `result` holds (tricks, score_ns, imps, points, alerts, lin)."""
    contract = final_contract(dealer, calls)
    view = {"name": name, "seats": list(seats), "calls": [call_name(call) for call in calls],
            "contract": contract[0], "declarer": contract[1], "contested": contested(dealer, calls)}
    return view | {key: value for key, value in result.items() if value is not None}


def final_contract(dealer: int, calls: Sequence[int]) -> tuple[str | None, int | None]:
    """('3NTX', declarer) of a finished auction, ('Pass', None) when passed out, (None, None) when
    the auction does not end (a log cut short)."""
    try:
        state = replay(dealer, calls)
    except IllegalCall:
        return None, None
    if not state.finished:
        return None, None
    contract = state.contract()
    return ("Pass", None) if contract is None else (str(contract), contract.declarer)


def contested(dealer: int, calls: Sequence[int]) -> bool:
    """Whether both sides made a bid (a double is not a bid)."""
    return len({(dealer + index) % 2 for index, call in enumerate(calls) if call >= 3}) == 2


def contract_level(contract: str | None) -> int | None:
    return 0 if contract == "Pass" else int(contract[0]) if contract else None


def lin_of(owner: np.ndarray | None, dealer: int, vul: int | None, board: int, players: Sequence[str | None],
           calls: Sequence[int], alerts: Sequence[str | None] | None = None) -> str | None:
    """The table as a LIN line for BBO's hand viewer (names left out where LIN cannot hold them)."""
    if owner is None:
        return None
    record = BoardRecord(source_file="", source_format="lin", source_position=0, source_line=0, owner=owner,
                         dealer=dealer, vulnerability=vul, board=board, players=[name or "" for name in players],
                         auction=list(calls))
    if alerts is not None:
        record.alerts = [note is not None for note in alerts]
        record.explanations = [note or None for note in alerts]
    try:
        return format_lin(record)
    except ValueError:  # '|' or ',' in a name or note
        record.players, record.explanations = None, None
        return format_lin(record)


def board_view(key: str, group: str, number: int, dealer: int, vul: int | None, owner: np.ndarray | None,
               tables: list[dict], cells: dict, **fields) -> dict:
    """One board of the list: where it is (`group`: the match or problem file), its hands (PBN
    holdings N, E, S, W, None when the run did not write them), tables, list cells and filter
    fields (swing, imps, lost; contested and level come from the tables)."""
    levels = [contract_level(table["contract"]) for table in tables]
    hands = None if owner is None else [hand_to_pbn(cards) for cards in hands_from_owner(owner)]
    view = {"key": key, "group": group, "board": number, "dealer": dealer, "vul": vul, "hands": hands,
            "tables": tables, "cells": {"group": group, "board": number} | cells,
            "contested": any(table.get("contested") for table in tables),
            "levels": sorted({level for level in levels if level is not None})}
    return view | {name: value for name, value in fields.items() if value is not None}


# ---------------------------------------------------------------- evaluate


def evaluate_run(folder: Path) -> dict:
    from .matches import match_agents, seat_names, summary
    from .match_pbn import reference_imps, table_rooms

    notes: list[str] = []
    rows = read_log(folder / "boards.parquet", EVALUATE_COLUMNS, ("match", "board", "dealer", "auctions"), notes)
    games = read_pbn_games(folder / "matches.pbn", notes)
    metrics = read_json(folder / "metrics.json", notes, "the summary is computed from boards.parquet's IMPs, "
                                                        "without timings or the run's config")
    boards, searched = [], False
    for row in rows:
        match, number, dealer, vul = row["match"], row["board"], row["dealer"], row["vul"]
        auctions = row["auctions"] or []
        rooms = table_rooms(len(auctions))
        try:
            _, first, second = match_agents(match)
            named_seats = seat_names(match)
        except InputError:  # a match name this version does not read: no agents named
            first, second, named_seats = None, None, [[None] * 4] * len(auctions)
        searched |= any((name or "").partition("@")[0] == "search" for name in (first, second))
        gains = reference_imps(row["scores_ns"]) if row["scores_ns"] else [None] * len(auctions)
        found = [games.get((match, number, room.lower())) for room in rooms]
        owner = next((game.owner for game in found if game is not None), None)
        dd = next((game.dd_tricks for game in found if game is not None and game.dd_tricks), None)
        tables = []
        for index, (calls, game) in enumerate(zip(auctions, found)):
            seats = game.players if game is not None and game.players else named_seats[index]
            alerts = pbn_alerts(game) if game is not None else None
            tables.append(table_view(
                rooms[index], seats, dealer, calls,
                tricks=pick(row["tricks"], index), score_ns=pick(row["scores_ns"], index), imps=gains[index],
                alerts=alerts, lin=lin_of(owner, dealer, vul, number, seats, calls, alerts)))
        cells = {"contracts": " / ".join(contract_cell(table) for table in tables), "imps": row["imps"],
                 "dealer": SEATS[dealer], "vul": vul}
        boards.append(board_view(f"{match}/{number}", match, number, dealer, vul, owner, tables, cells,
                                 imps=row["imps"], swing=None if row["imps"] is None else abs(row["imps"]), dd=dd,
                                 agent=first))
    if games and any(board["hands"] is None for board in boards):
        notes.append("matches.pbn lacks some boards: those are shown without hands.")
    if searched:
        notes.append("Evaluate runs do not record the search's candidates: `bridgeflow bid` shows them for one "
                     "decision, a selfplay run's report for every searched decision.")
    if metrics is None:
        by_match = defaultdict(list)
        for row in rows:
            if row["imps"] is not None:
                by_match[row["match"]].append(row["imps"])
        metrics = {"matches": {match: summary(values) for match, values in by_match.items()}, "paired": {}}
    columns = [column("group", "Match"), column("board", "Board", True), column("dealer", "Dealer"),
               column("vul", "Vul"), column("contracts", "Contracts")]
    if any(row["imps"] is not None for row in rows):
        columns.append(column("imps", "IMPs", True))
    return page("evaluate", folder, evaluate_summary(metrics), columns, boards, notes)


def pick(values: list | None, index: int):
    return None if values is None or index >= len(values) else values[index]


def contract_cell(table: dict) -> str:
    if table["contract"] in (None, "Pass"):
        return table["contract"] or "?"
    return f"{table['contract']} {SEATS[table['declarer']]}"


def read_pbn_games(path: Path, notes: list[str]) -> dict[tuple, BoardRecord]:
    """matches.pbn's games by (event, board, room in lower case); noted when the file is absent or a
    game unread."""
    if not path.exists():
        notes.append(f"{path.name} is missing: no hands, DD tables, player names or alerts (auctions, contracts "
                     f"and scores are from boards.parquet).")
        return {}
    games, rejected = {}, []
    for record in parse_pbn(path.read_bytes(), path.name):
        if isinstance(record, BoardRecord):
            games[(record.event, record.board, (record.room or "").lower())] = record
        else:
            rejected.append(str(record))
    if rejected:
        notes.append(f"{len(rejected)} games of {path.name} could not be read (those boards show no hands), "
                     f"e.g. {rejected[0]}")
    return games


def pbn_alerts(record: BoardRecord) -> list[str | None] | None:
    """Per call, None or the alert's explanation ('' when none is given); None when nothing is alerted."""
    if not record.alerts or not any(record.alerts):
        return None
    explanations = record.explanations or [None] * len(record.alerts)
    return [(explanation or "") if alerted else None for alerted, explanation in zip(record.alerts, explanations)]


def interval(result: dict) -> str:
    return "" if not result.get("ci95") else f"[{result['ci95'][0]:+.2f}, {result['ci95'][1]:+.2f}]"


def imps_row(name: str, result: dict) -> list:
    mean, se = result.get("mean_imps"), result.get("se")
    return [name, None if mean is None else f"{mean:+.2f}", "" if se is None else f"{se:.2f}", interval(result),
            result.get("boards")]


def evaluate_summary(metrics: dict) -> list[dict]:
    header = ["match", "IMPs/board", "se", "95% interval", "boards"]
    blocks = [table_block("Matches (IMPs/board for the first agent)", header,
                          [imps_row(name, result) for name, result in metrics.get("matches", {}).items()])]
    if metrics.get("paired"):
        blocks.append(table_block("Paired differences on the same boards", ["difference", *header[1:]],
                                  [imps_row(name, result) for name, result in metrics["paired"].items()]))
    if "boards" in metrics or "seed" in metrics:
        boards = metrics.get("boards", {})
        blocks.append({"title": "Run", "text": f"{boards.get('count', '?')} boards (hash {boards.get('hash', '?')}, "
                                               f"from {boards.get('source', '?')}), seed {metrics.get('seed', '?')}"})
    return blocks


# ---------------------------------------------------------------- challenge


def challenge_run(folder: Path) -> dict:
    from . import challenge_report

    notes: list[str] = []
    rows = read_log(folder / "boards.parquet", CHALLENGE_COLUMNS, ("file", "board", "agent", "dealer", "auction"), notes)
    metrics = read_json(folder / "metrics.json", notes, "no totals, intervals or robots' auctions")
    agents = list(dict.fromkeys(row["agent"] for row in rows))
    deals, awards, unread = {}, {}, []
    for file in dict.fromkeys(row["file"] for row in rows):
        for agent in agents:
            path = folder / challenge_report.pbn_name(file, agent)
            if path.exists():
                try:
                    for board in facit.read_results(path).boards:
                        deals.setdefault((file, board.board), board.deal)
                        awards.setdefault((file, board.board), [[award.contract, award.points] for award in board.table])
                except InputError as error:
                    unread.append(str(error))
    if unread:
        notes.append(f"{len(unread)} of the run's PBN files could not be read: {unread[0]}")
    if not deals:
        notes.append("No STEM-AGENT.pbn file of this run was found: no hands or award tables.")
    comparisons = (metrics or {}).get("comparisons", {})
    if metrics is not None and not comparisons:
        notes.append("The run had no --compare: no robots' auctions.")
    theirs = defaultdict(list)  # (file, board) -> the robots' auctions
    for results, by_agent in comparisons.items():
        result = next(iter(by_agent.values()), None)
        for board in (result or {}).get("per_board", []):
            theirs[(result["problems"], board["board"])].append((results, board))
    boards = []
    for (file, number), board_rows in group_rows(rows).items():
        first = board_rows[0]
        dealer, vul = first["dealer"], first["vul"]
        owner = None
        if (file, number) in deals:
            try:
                owner = owner_from_hands(facit.seat_hands(deals[(file, number)]))
            except ValueError:
                owner = None
        tables = []
        for row in board_rows:
            calls = parse_calls(row["auction"])
            seats = [row["agent"], "Facit", row["agent"], "Facit"]
            tables.append(table_view(row["agent"], seats, dealer, calls, points=row["points"],
                                     substitutions=row["substitutions"] or None,
                                     lin=lin_of(owner, dealer, vul, number, seats, calls)))
        robots = []
        for results, board in theirs.get((file, number), []):
            calls = parse_calls(board["their_auction"])
            robots.append(table_view(results, [results, "Facit", results, "Facit"], dealer, calls,
                                     points=board["their_points"], script_kept=board["their_script_kept"],
                                     lin=lin_of(owner, dealer, vul, number, [results, "Facit", results, "Facit"], calls)))
        top = first["top_points"]
        lost = None if top is None or any(row["points"] is None for row in board_rows) else \
            max(top - row["points"] for row in board_rows)
        cells = {"kind": first["kind"], "dealer": SEATS[dealer], "vul": vul, "top": top, "lost": lost,
                 "contracts": " / ".join(contract_cell(table) for table in tables)}
        cells |= {f"points:{row['agent']}": row["points"] for row in board_rows}
        boards.append(board_view(f"{file}/{number}", file, number, dealer, vul, owner, tables, cells, lost=lost,
                                 problem_kind=first["kind"], top_contract=first["top_contract"], top_points=top,
                                 awards=awards.get((file, number)), robots=robots or None))
    columns = [column("group", "File"), column("board", "Board", True), column("kind", "Kind"),
               column("dealer", "Dealer"), column("vul", "Vul"), column("contracts", "Contracts"),
               column("top", "Top", True)]
    columns += [column(f"points:{agent}", f"{agent} points", True) for agent in agents]
    columns.append(column("lost", "Points lost", True))
    summary = []
    if metrics is not None:
        summary.append(table_block("Points per agent (all files)", ["agent", "points", "of top", "percent", "boards"],
                                   [[agent, result["points"], result["max"], f"{result['percent']:.1f}%", result["boards"]]
                                    for agent, result in metrics.get("all", {}).items()]))
        summary.append({"title": "Totals and paired intervals (as in report.txt)",
                        "text": "\n".join(challenge_report.summary_lines(metrics) + challenge_report.comparison_lines(comparisons))})
    return page("challenge", folder, summary, columns, boards, notes)


def group_rows(rows: list[dict]) -> dict[tuple[str, int], list[dict]]:
    boards: dict[tuple[str, int], list[dict]] = {}
    for row in rows:
        boards.setdefault((row["file"], row["board"]), []).append(row)
    return boards


def parse_calls(text: str | None) -> list[int]:
    return [parse_call(word) for word in (text or "").split()]


# ---------------------------------------------------------------- generation


def generation_run(folder: Path) -> dict:
    notes = ["Generation runs keep no per-board log (only each match's totals): `bridgeflow evaluate` with the "
             "same agents and --boards shows the boards."]
    results = read_json(folder / "results.json", notes, "")
    history = read_json(folder / "history.json", notes, "")
    summary = [table_block(f"Generation {results.get('generation')}: matches (IMPs/board for the first agent)",
                           ["match", "IMPs/board", "se", "95% interval", "boards"],
                           [imps_row(name, result) for name, result in results.get("matches", {}).items()])]
    facit = results.get("facit")
    if facit:
        vs_base = facit.get("vs_base", {})
        summary.append(table_block(f"Facit ({', '.join(facit.get('files', []))})",
                                   ["agent", "points", "of top", "percent", "vs base", "95% interval"],
                                   [[label, totals["points"], totals["max"], f"{totals['percent']:.1f}%",
                                     *((f"{vs_base[label]['difference']:+.1f}",
                                        f"[{vs_base[label]['low']:+.1f}, {vs_base[label]['high']:+.1f}]")
                                       if label in vs_base else ("", ""))]
                                    for label, totals in facit.get("totals", {}).items()]))
    if history:  # the columns some generation has, numbers to two places
        keys = [key for key in history[0] if any(row.get(key) is not None for row in history)]
        summary.append(table_block("History", keys, [[round(row[key], 2) if isinstance(row.get(key), float) else row.get(key)
                                                      for key in keys] for row in history]))
    plot = folder / "history.png"
    if plot.exists():
        summary.append({"title": "History plot", "image": "data:image/png;base64," + base64.b64encode(plot.read_bytes()).decode()})
    else:
        notes.append("history.png is missing: no plot.")
    return page("generation", folder, summary, [], [], notes)


# ---------------------------------------------------------------- selfplay


def selfplay_run(folder: Path) -> dict:
    notes = ["Self-play boards are one table each, bid by the network (its searched decisions scored by NN-DDA "
             "or DDS inside the search): no scores, DD tricks or IMP swings."]
    summary_json = read_json(folder / "summary.json", notes, "")
    try:
        rows = pq.read_table(folder / "decisions").to_pylist()
    except Exception as error:  # a damaged or foreign dataset
        raise InputError(f"{folder / 'decisions'}: not readable as self-play decisions: {error}") from None
    by_board = defaultdict(list)
    for row in rows:
        by_board[row["board"]].append(row)
    boards = []
    for number in sorted(by_board):
        calls_rows = sorted(by_board[number], key=lambda row: row["position"])
        first = calls_rows[0]
        owner = np.asarray(first["owner"], np.int8)
        dealer, vul = first["dealer"], first["vulnerability"]
        calls = [row["call"] for row in calls_rows]
        seats = [None] * 4
        for row in calls_rows:
            seats[row["seat"]] = seats[row["seat"]] or row["actor"]
        decisions = [decision_view(row) for row in calls_rows if row["actor"] == "bsm"]
        table = table_view("Self-play", seats, dealer, calls,
                           lin=lin_of(owner, dealer, vul, number, seats, calls))
        searched = sum(decision["searched"] for decision in decisions)
        changed = sum(row["prior_best"] != row["policy_best"] for row in calls_rows if row["actor"] == "bsm")
        cells = {"dealer": SEATS[dealer], "vul": vul, "contracts": contract_cell(table), "searched": searched,
                 "changed": changed}
        boards.append(board_view(f"{number}", f"generation {first['generation']}", number, dealer, vul, owner,
                                 [table], cells, decisions=decisions))
    columns = [column("board", "Board", True), column("dealer", "Dealer"), column("vul", "Vul"),
               column("contracts", "Contract"), column("searched", "Searched", True),
               column("changed", "Best call changed", True)]
    summary = [table_block("Self-play", ["", "value"],
                           [[key, f"{value:.3f}" if isinstance(value, float) else value]
                            for key, value in (summary_json or {}).items() if not isinstance(value, dict)])]
    return page("selfplay", folder, summary, columns, boards, notes)


def decision_view(row: dict) -> dict:
    """A network decision: its candidates (likeliest first) with prior, Q (mean IMPs) and SE where
    searched, and pi'; the deals rolled out and the call played."""
    q, se = row["q"] or [None] * len(row["candidates"]), row["se"] or [None] * len(row["candidates"])
    return {"position": row["position"], "seat": row["seat"], "searched": bool(row["searched"]),
            "skipped": row["skipped"], "samples": row["samples"], "call": call_name(row["call"]),
            "candidates": [[call_name(call), round(prior, 4), None if value is None else round(value, 3),
                            None if error is None else round(error, 3), round(policy, 4)]
                           for call, prior, value, error, policy in zip(row["candidates"], row["prior"], q, se, row["policy"])]}


# ---------------------------------------------------------------- the page


def render(data: dict) -> str:
    """The HTML page: board_report.html with the data as JSON in it. `<`, `>` and `&` are written
    as \\u escapes, so no string (a name `</script>`) can end the script element early."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False, default=str)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    template = PAGE_TEMPLATE.read_text(encoding="utf-8")
    head, mark, tail = template.partition(DATA_MARK)
    if not mark:
        raise RuntimeError(f"{PAGE_TEMPLATE} has no {DATA_MARK}")
    title = data["title"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return head.replace("<title>bridgeflow report</title>", f"<title>{title}</title>") + text + tail


def run(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(prog="bridgeflow report",
                                     description="A run's boards as one self-contained HTML page (opens offline).")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="an evaluate, challenge, generation or selfplay --out folder")
    parser.add_argument("--out", help=f"the HTML file (default: RUN_DIR/{REPORT_FILE})")
    parser.add_argument("--screenshot", metavar="PNG", help="also save the page as shown by headless Chromium")
    args = parser.parse_args(argv)
    data = read_run(args.run_dir)
    out = Path(args.out) if args.out else Path(args.run_dir) / REPORT_FILE
    if not out.parent.exists():
        raise InputError(f"--out {out}: folder {out.parent} does not exist")
    out.write_text(render(data), encoding="utf-8")
    print(f"{out}: {len(data['boards'])} boards, {out.stat().st_size / 1024:.0f} KiB")
    if args.screenshot:
        from .headless import Chromium

        with Chromium() as browser:
            browser.open(out)
            Path(args.screenshot).write_bytes(browser.screenshot())
        print(f"{args.screenshot}: the page in headless Chromium")
    return out
