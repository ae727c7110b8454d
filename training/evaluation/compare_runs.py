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

Several seeds: give `--first` and `--second` once per seed, in the same order (the first
`--first` pairs with the first `--second`, ...). A setting that changes how the search samples
reshuffles its random stream as a new seed does, so one seed's pairing carries that seed's luck
(docs/search.md "How faithful the deals should be"). The statistic is then over boards of each
board's difference averaged over the seeds (the board stays the unit: its seeds are not
independent boards). The order of the pairs matters only to where they differ: `differences` sums
the pairs' changed tables with each board's IMPs divided by the number of pairs (so the per-board
column still adds up to the mean), challenge runs' changed problems are listed per pair, and
`swings` come from the first pair.

The JSON written is {"kind", "first", "second", "paired", "differences", "swings"} with `first`
and `second` the lists of RUN:NAME given and `paired` keyed as the verb keys it (`swings` empty for
challenge runs)."""

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


def compare(first: list[str], second: list[str], swings: int = 5) -> dict:
    """The paired statistic of `first` minus `second`, pair by pair averaged per board, and where
    they differ (module docstring)."""
    if len(first) != len(second):
        raise InputError(f"{len(first)} --first and {len(second)} --second: give them in pairs, one per seed")
    pairs = [(read_side(new), read_side(old)) for new, old in zip(first, second)]
    (kind, reference), _ = pairs[0]
    for (new, old), ((new_kind, a), (old_kind, b)) in zip(zip(first, second), pairs):
        if new_kind != old_kind:
            raise InputError(f"{new} comes from {new_kind}, {old} from {old_kind}: nothing to pair")
        if new_kind != kind:
            raise InputError(f"{new} comes from {new_kind}, {first[0]} from {kind}: nothing to pair")
        for spec, rows in ((new, a), (old, b)):
            if rows.keys() != reference.keys():
                raise InputError(f"{first[0]} and {spec} are not on the same boards "
                                 f"({len(reference.keys() - rows.keys())} only in the first, "
                                 f"{len(rows.keys() - reference.keys())} only in the second)")
    boards = sorted(reference)
    runs = [([a[board] for board in boards], [b[board] for board in boards]) for (_, a), (_, b) in pairs]
    if kind == "evaluate":
        mean = [sum(new[i]["imps"] - old[i]["imps"] for new, old in runs) / len(runs) for i in range(len(boards))]
        paired = summary(mean)
        where = merged([differences(new, old) for new, old in runs])
        new, old = runs[0]
        largest = sorted(range(len(boards)), key=lambda i: -abs(new[i]["imps"] - old[i]["imps"]))[:swings]
        shown = [swing(new[i], old[i]) for i in largest if new[i]["imps"] != old[i]["imps"]]
    else:
        def averaged(side: int) -> list[dict]:
            return [{"points": sum(run[side][i]["points"] for run in runs) / len(runs),
                     "top_points": runs[0][side][i]["top_points"]} for i in range(len(boards))]
        paired = paired_interval(averaged(0), averaged(1), CHALLENGE_SEED)
        where = [row | ({"pair": number} if len(runs) > 1 else {})
                 for number, (new, old) in enumerate(runs, 1) for row in changed_problems(new, old)]
        shown = []
    return {"kind": kind, "first": first, "second": second, "paired": paired, "differences": where, "swings": shown}


def merged(pairs: list[dict]) -> dict:
    """Several pairs' `differences` (one or more) as one: tables, won and lost summed, IMPs
    averaged over the pairs."""
    rows: dict[tuple[str, bool], dict] = {}
    for where in pairs:
        for row in where["by_change"]:
            total = rows.setdefault((row["change"], row["contested"]),
                                    dict(row, tables=0, imps=0.0, won=0, lost=0))
            for key in ("tables", "won", "lost"):
                total[key] += row[key]
            total["imps"] += row["imps"] / len(pairs)
    return {"boards": pairs[0]["boards"], "pairs": len(pairs), "tables": sum(where["tables"] for where in pairs),
            "by_change": sorted(rows.values(), key=lambda row: (-row["imps"], row["change"], row["contested"]))}


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
    lines += [f"{'pair %d: ' % row['pair'] if 'pair' in row else ''}"
              f"{row['file']} board {row['board']}: {row['second']} -> {row['first']}, "
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
    boards = f"{where['boards']} boards" + (f" x {where['pairs']} pairs" if where["pairs"] > 1 else "")
    lines = [f"{where['tables']} tables of {boards} bid differently; by the first call that differs "
             "(second -> first), IMPs per board of all boards:",
             f"{'change':<16} {'contested':<9} {'tables':>6} {'IMPs':>8} {'per board':>9} {'won':>4} {'lost':>4}"]
    for row in where["by_change"]:
        lines.append(f"{row['change']:<16} {'yes' if row['contested'] else 'no':<9} {row['tables']:>6} "
                     f"{row['imps']:>+8.1f} {row['imps'] / where['boards']:>+9.3f} {row['won']:>4} {row['lost']:>4}")
    return "\n".join(lines)


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", required=True, action="append", metavar="RUN:NAME",
                        help="run folder and match or agent (repeatable: one per seed, paired in order with --second)")
    parser.add_argument("--second", required=True, action="append", metavar="RUN:NAME",
                        help="the same boards, the other settings (repeatable, as --first)")
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
