"""`bridgeflow compare`: two runs on the same boards, paired: did a change of settings or model help?

    bridgeflow compare --first data/runs/new:search@models/bsm_pi:ben-nosearch \
        --second data/runs/old:search@models/bsm_pi:ben-nosearch [--out paired.json]

`evaluate` and `challenge` pair agents within one run, but settings such as `search:` are one per
run, so comparing two search configurations (or two NN-DDAs) takes two runs. Each side is RUN:NAME,
a run folder (its boards.parquet) and the match (evaluate) or agent (challenge) in it. The boards
of both sides must be the same set; the answer is the same statistic the verbs use within a run:

- evaluate runs: the mean of the per-board IMP differences, its standard error and normal 95%
  interval (`matches.summary`);
- challenge runs: the Facit points gained over the top awards in percent, with the paired
  bootstrap interval over problems (`problem_scores.paired_interval`, the same seed).

For evaluate runs it also says where the difference came from (`differences`): at each table
whose auctions differ, the first call that differs (the second run's call -> the first's: Pass ->
bid, Pass -> X, a higher or lower bid, ...), whether the caller's opponents had bid or doubled
before it, and the board's IMP difference shared equally by its differing tables; summed per kind
of change, with the tables won and lost. A search's gain over its network shows as the calls it
overturns; `swings` are the boards with the largest differences (`--swings N`), both runs'
auctions and contracts at their differing tables, to read. For challenge runs `differences` lists
the problems bid to another contract: the second run's contract and points -> the first's, against
the top award.

The JSON written is {"kind", "first", "second", "paired", "differences", "swings"} with `paired`
keyed as the verb keys it (`swings` empty for challenge runs)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bridgeflow.dataset.atomic import write_json
from bridgeflow.dataset.encodings import DOUBLE, PASS, REDOUBLE, SEATS, call_name
from bridgeflow.dataset.errors import InputError, existing, output_file

from .matches import summary
from .problem_scores import paired_interval

CHALLENGE_SEED = 0  # challenge's default --seed, which also seeds its bootstrap


def read_side(spec: str) -> tuple[str, dict[tuple, dict]]:
    """RUN:NAME -> (the run's kind, its rows for NAME keyed by board). Kind: 'evaluate' (column
    `match`, per-board `imps`) or 'challenge' (column `agent`, per-problem `points`)."""
    run, sep, name = spec.partition(":")
    if not sep or not name:
        raise InputError(f"{spec!r}: expected RUN:NAME, a run folder and a match or agent in it")
    path = existing(Path(run) / "boards.parquet", f"run {run}")
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise InputError(f"{path}: not a readable Parquet file ({str(error).splitlines()[0][:200]})") from None
    kind, column = ("evaluate", "match") if "match" in table.column_names else ("challenge", "agent")
    needed = ({"match", "deal_id", "imps", "dealer", "auctions", "contracts"} if kind == "evaluate"
              else {"agent", "file", "board", "contract", "points", "top_points", "top_contract"})
    if not needed <= set(table.column_names):
        raise InputError(f"{path}: not an evaluate or challenge boards.parquet (no {', '.join(sorted(needed - set(table.column_names)))})")
    rows = table.filter(pc.equal(table[column], name)).to_pylist()
    if not rows:
        names = sorted(set(table[column].to_pylist()))
        raise InputError(f"{run}: no {column} {name!r} in its boards.parquet (it has {', '.join(names)})")
    key = (lambda row: row["deal_id"]) if kind == "evaluate" else (lambda row: (row["file"], row["board"]))
    return kind, {key(row): row for row in rows}


def compare(first: str, second: str, swings: int = 5) -> dict:
    """The paired statistic of `first` minus `second` and where they differ (module docstring)."""
    (kind, a), (other_kind, b) = read_side(first), read_side(second)
    if kind != other_kind:
        raise InputError(f"{first} comes from {kind}, {second} from {other_kind}: nothing to pair")
    if a.keys() != b.keys():
        raise InputError(f"{first} and {second} are not on the same boards "
                         f"({len(a.keys() - b.keys())} only in the first, {len(b.keys() - a.keys())} only in the second)")
    boards = sorted(a)
    if kind == "evaluate":
        paired = summary([a[board]["imps"] - b[board]["imps"] for board in boards])
        where = differences([a[board] for board in boards], [b[board] for board in boards])
        largest = sorted(boards, key=lambda board: -abs(a[board]["imps"] - b[board]["imps"]))[:swings]
        shown = [swing(a[board], b[board]) for board in largest if a[board]["imps"] != b[board]["imps"]]
    else:
        paired = paired_interval([a[board] for board in boards], [b[board] for board in boards], CHALLENGE_SEED)
        where, shown = changed_problems([a[board] for board in boards], [b[board] for board in boards]), []
    return {"kind": kind, "first": first, "second": second, "paired": paired, "differences": where, "swings": shown}


def swing(new: dict, old: dict) -> dict:
    """One board both runs played: the IMPs of each, and at each table bid differently the two
    auctions (from the dealer) and contracts."""
    tables = [{"table": t + 1, "second": " ".join(call_name(c) for c in before), "first": " ".join(call_name(c) for c in auction),
               "contracts": [old["contracts"][t], new["contracts"][t]]}
              for t, (auction, before) in enumerate(zip(new["auctions"], old["auctions"])) if list(auction) != list(before)]
    return {"deal_id": new["deal_id"], "board": new.get("board"), "dealer": SEATS[new["dealer"]],
            "imps": [old["imps"], new["imps"]], "tables": tables}


def call_kind(call: int) -> str:
    return {PASS: "Pass", DOUBLE: "X", REDOUBLE: "XX"}.get(call, "bid")


def change(second: int, first: int) -> str:
    """The kind of a changed call, the second run's call -> the first's."""
    if call_kind(second) == call_kind(first) == "bid":
        return "higher bid" if first > second else "lower bid"
    return f"{call_kind(second)} -> {call_kind(first)}"


def differences(first: list[dict], second: list[dict]) -> dict:
    """Per kind of change at the first differing call of each table: tables, IMPs (each board's
    difference shared by its differing tables), tables won and lost; most IMPs first."""
    rows: dict[tuple[str, bool], dict] = {}
    tables = 0
    for new, old in zip(first, second):
        changed = []
        for auction, before in zip(new["auctions"], old["auctions"]):
            at = next((i for i, (x, y) in enumerate(zip(auction, before)) if x != y), None)
            if at is None:
                continue
            side = (new["dealer"] + at) % 2  # the caller's side; their opponents sat at the other parity
            contested = any(call != PASS and (new["dealer"] + i) % 2 != side for i, call in enumerate(auction[:at]))
            changed.append((change(before[at], auction[at]), contested))
        tables += len(changed)
        for key in changed:
            share = (new["imps"] - old["imps"]) / len(changed)
            row = rows.setdefault(key, {"change": key[0], "contested": key[1], "tables": 0, "imps": 0.0,
                                        "won": 0, "lost": 0})
            row["tables"] += 1
            row["imps"] += share
            row["won"] += share > 0
            row["lost"] += share < 0
    return {"boards": len(first), "tables": tables,
            "by_change": sorted(rows.values(), key=lambda row: (-row["imps"], row["change"], row["contested"]))}


def changed_problems(first: list[dict], second: list[dict]) -> list[dict]:
    """The problems the two runs bid to different contracts, in problem order."""
    return [{"file": new["file"], "board": new["board"], "second": old["contract"], "first": new["contract"],
             "points": [old["points"], new["points"]], "top": [new["top_contract"], new["top_points"]]}
            for new, old in zip(first, second) if new["contract"] != old["contract"]]


def format_changed(changed: list[dict]) -> str:
    lines = [f"{len(changed)} problems bid to another contract (second -> first, points, top award):"]
    lines += [f"{row['file']} board {row['board']}: {row['second']} -> {row['first']}, "
              f"{row['points'][0]} -> {row['points'][1]} of {row['top'][1]} ({row['top'][0]})" for row in changed]
    return "\n".join(lines)


def format_swings(shown: list[dict]) -> str:
    lines = [f"The {len(shown)} largest swings (IMPs second -> first; auctions from the dealer):"]
    for row in shown:
        lines.append(f"board {row['board']} (deal {row['deal_id']}), dealer {row['dealer']}: "
                     f"{row['imps'][0]:+g} -> {row['imps'][1]:+g}")
        for table in row["tables"]:
            lines.append(f"  table {table['table']}: {table['second']} ({table['contracts'][0]}) -> "
                         f"{table['first']} ({table['contracts'][1]})")
    return "\n".join(lines)


def format_differences(where: dict) -> str:
    lines = [f"{where['tables']} tables of {where['boards']} boards bid differently; by the first call that differs "
             "(second -> first), IMPs per board of all boards:",
             f"{'change':<16} {'contested':<9} {'tables':>6} {'IMPs':>8} {'per board':>9} {'won':>4} {'lost':>4}"]
    for row in where["by_change"]:
        lines.append(f"{row['change']:<16} {'yes' if row['contested'] else 'no':<9} {row['tables']:>6} "
                     f"{row['imps']:>+8.1f} {row['imps'] / where['boards']:>+9.3f} {row['won']:>4} {row['lost']:>4}")
    return "\n".join(lines)


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", required=True, metavar="RUN:NAME", help="run folder and match or agent")
    parser.add_argument("--second", required=True, metavar="RUN:NAME", help="the same boards, the other settings")
    parser.add_argument("--swings", type=int, default=5, metavar="N",
                        help="evaluate runs: show the N boards with the largest differences (default 5)")
    parser.add_argument("--out", type=Path, help="write the comparison here as JSON")
    args = parser.parse_args(argv)
    try:
        out = args.out and output_file(args.out)
        if args.swings < 0:
            raise InputError(f"--swings must be >= 0, not {args.swings}")
        result = compare(args.first, args.second, args.swings)
    except InputError as error:
        parser.error(str(error))
    if out:
        write_json(out, result)  # its folder made if missing
    print(json.dumps(result["paired"]))
    where = result["differences"]
    print(format_differences(where) if result["kind"] == "evaluate" else format_changed(where), file=sys.stderr)
    if result["swings"]:
        print(format_swings(result["swings"]), file=sys.stderr)
    return result


if __name__ == "__main__":  # as the results files' commands of 2026-12-04 call it
    run(sys.argv[1:])
