"""How strong is it? One row per agent against yardsticks nobody here wrote: the share of the top
Facit awards on the dev and claim halves of BEN's Challenges, and IMPs/board against BEN's network
on the committed test list. README's first table and docs/yardsticks.png are made from the
committed results files by

    python -m bridgeflow.yardsticks            # writes results/yardsticks.json and docs/yardsticks.png
    python -m bridgeflow.yardsticks --markdown # prints README's table

and tests/test_results.py checks that both still agree with those files. A Facit cell is points over
top awards summed over the half's problem files (BW + CTC_mayjun20; BW2 + oct13_feb23_nov23_jun24);
the robots' row takes, per problem file, the best of the robots' Results files on it."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from bridgeflow.results import RESULTS, content_hash, lookup, write_result

PLOT = RESULTS.parent / "docs" / "yardsticks.png"
TEST_LIST = "benchmarks/boards/test1000-99038c9e00ac4c27.json"  # the table column's boards (claims only)


@dataclass(frozen=True)
class Row:
    """One agent: where its numbers are (results file stem, dotted key of a {points, max} total, or
    of an evaluate match summary). `robots`: the results file stem whose compared Results files'
    best scores make the row."""

    agent: str
    label: str
    dev: tuple[tuple[str, str], ...] = ()
    claim: tuple[tuple[str, str], ...] = ()
    table: tuple[str, str] | None = None
    robots: str | None = None


DEFAULT = "search@models/bsm_pi"
ROWS = (
    Row("rule", "rule-based bidder (ours, hand-written)",
        dev=(("challenge_agents", "metrics.dev.all.rule"),), claim=(("challenge_agents", "metrics.claim.all.rule"),),
        table=("eval_test1000", "metrics.evaluate.matches.rule:ben-nosearch")),
    Row("bsm@models/bsm_pi", "BSM `models/bsm_pi`, the network alone",
        dev=(("search_queen_ask_claims", "metrics.dev.all.bsm@models/bsm_pi"),),
        claim=(("search_queen_ask_claims", "metrics.claim.all.bsm@models/bsm_pi"),),
        table=("search_queen_ask_claims", "metrics.test_net.matches.bsm@models/bsm_pi:ben-nosearch")),
    Row(DEFAULT, "**search over `models/bsm_pi`: bridgeflow's default**",
        dev=(("search_prior_weight_claims", "metrics.dev.all.search@models/bsm_pi"),),
        claim=(("search_prior_weight_claims", "metrics.claim.all.search@models/bsm_pi"),),
        table=("search_prior_weight_claims", "metrics.test.matches.search@models/bsm_pi:ben-nosearch")),
    Row("ben-nosearch", "BEN's network alone (`ben-nosearch`)",
        dev=(("challenge_agents", "metrics.dev.all.ben-nosearch"),),
        claim=(("challenge_agents", "metrics.claim.all.ben-nosearch"),)),
    Row("ben", "BEN with its own search (`ben`)",
        dev=(("challenge_ben_search_bw", "metrics.bw.all.ben"), ("challenge_ben_search_ctc", "metrics.ctc.all.ben")),
        claim=(("challenge_ben_search_bw", "metrics.bw2.all.ben"), ("challenge_ben_search_oct13", "metrics.oct13.all.ben"))),
    Row("robots", "the best robot Results file of each problem set (GIB, BBA, BEN runs)", robots="challenge_agents"),
)


def read(stem: str) -> dict:
    return json.loads((RESULTS / f"{stem}.json").read_text())


def facit_cell(totals: list[dict]) -> dict:
    points, best = sum(t["points"] for t in totals), sum(t["max"] for t in totals)
    return {"points": points, "max": best, "percent": 100.0 * points / best}


def best_robots(stem: str, half: str) -> dict:
    """Per problem file of the half, the best robot Results file's Facit points; summed."""
    best: dict[str, dict] = {}
    for name, by_agent in lookup(read(stem), f"metrics.{half}.comparisons").items():
        compared = next(iter(by_agent.values()))  # their points do not depend on our agent
        file = compared["problems"]
        if file not in best or compared["their_points"] > best[file]["points"]:
            best[file] = {"points": compared["their_points"], "max": compared["max"], "results_file": name}
    cell = facit_cell(list(best.values()))
    return cell | {"results_files": sorted(b["results_file"] for b in best.values())}


def table_cell(stem: str, key: str) -> dict:
    match = lookup(read(stem), key)
    return {"mean_imps": match["mean_imps"], "low": match["ci95"][0], "high": match["ci95"][1], "boards": match["boards"]}


def compute() -> list[dict]:
    """The rows, read from the results files (the cells a row has no measurement for are None)."""
    rows = []
    for row in ROWS:
        cells = {}
        for half, sources in (("dev", row.dev), ("claim", row.claim)):
            if row.robots:
                cells[half] = best_robots(row.robots, half)
            else:
                cells[half] = facit_cell([lookup(read(stem), key) for stem, key in sources]) if sources else None
        cells["vs_ben_nosearch"] = table_cell(*row.table) if row.table else None
        rows.append({"agent": row.agent, "label": row.label} | cells)
    return rows


def sources() -> list[str]:
    stems = {stem for row in ROWS for stem, _ in (*row.dev, *row.claim, *([row.table] if row.table else []))}
    return sorted(f"results/{stem}.json" for stem in stems | {row.robots for row in ROWS if row.robots})


def markdown(rows: list[dict]) -> str:
    """README's first results table."""
    lines = ["| agent | Facit dev half (60 problems) | Facit claim half (80 problems) | IMPs/board vs BEN's network, test list (95% interval) |",
             "|---|---:|---:|---:|"]
    for row in rows:
        facit = [f"{row[h]['percent']:.1f}%" if row[h] else "n/a" for h in ("dev", "claim")]
        if row["agent"] == "ben-nosearch":
            table = "0 (the yardstick)"
        elif row["vs_ben_nosearch"]:
            cell = row["vs_ben_nosearch"]
            table = f"{cell['mean_imps']:+.2f} [{cell['low']:+.2f}, {cell['high']:+.2f}]"
        else:
            table = "not measured"
        lines.append(f"| {row['label']} | {facit[0]} | {facit[1]} | {table} |")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [row["agent"] for row in rows]
    figure, (facit, table) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    for offset, half in ((-0.2, "dev"), (0.2, "claim")):
        values = [row[half]["percent"] if row[half] else 0 for row in rows]
        facit.bar([i + offset for i in range(len(rows))], values, width=0.4, label=f"{half} half")
    facit.set_xticks(range(len(rows)), names, rotation=25, ha="right")
    facit.set_ylabel("% of the top Facit awards")
    facit.set_ylim(30, 70)
    facit.legend()
    measured = [(row["agent"], row["vs_ben_nosearch"]) for row in rows if row["vs_ben_nosearch"]]
    for i, (_, cell) in enumerate(measured):
        table.errorbar(i, cell["mean_imps"], yerr=[[cell["mean_imps"] - cell["low"]], [cell["high"] - cell["mean_imps"]]],
                       fmt="o", capsize=4)
    table.axhline(0, color="grey", linewidth=1)
    table.set_xticks(range(len(measured)), [name for name, _ in measured], rotation=25, ha="right")
    table.set_ylabel("IMPs/board vs BEN's network (95%)")
    table.set_xlim(-0.5, len(measured) - 0.5)
    figure.suptitle("bridgeflow against yardsticks nobody here wrote (results/yardsticks.json)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bridgeflow.yardsticks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print README's table instead of writing the files")
    args = parser.parse_args(argv)
    rows = compute()
    if args.markdown:
        print(markdown(rows))
        return
    write_result("yardsticks", "python -m bridgeflow.yardsticks", {"rows": rows, "test_list": TEST_LIST}, {},
                 {path: content_hash(RESULTS.parent / path) for path in sources()}, "those of its sources")
    plot(rows, PLOT)
    print(f"wrote {RESULTS / 'yardsticks.json'} and {PLOT}")


if __name__ == "__main__":
    main()
