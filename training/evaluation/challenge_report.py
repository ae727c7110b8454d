"""What `bridgeflow challenge` writes as text: the totals and comparison lines, report.txt (every
board: hands, auctions, points, where each compared robot parts), and each agent's auctions as a
PBN shaped like BEN's Results files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from bridgeflow.dataset import facit
from bridgeflow.dataset.encodings import SEATS, VUL_NAMES, hand_to_pbn


def comparison_lines(comparisons: dict) -> list[str]:
    lines = []
    for results, by_agent in comparisons.items():
        for agent, result in by_agent.items():
            lines.append(f"{agent} vs {results}: {result['identical_auctions']}/{result['boards']} identical auctions "
                         f"({100 * result['share_identical']:.0f}%; {result['identical_where_script_kept']}/"
                         f"{result['boards_script_kept']} where it kept the scripts); Facit {result['points']}/"
                         f"{result['max']} against their {result['their_points']}/{result['max']}"
                         + (f"; {len(result['skipped'])} of its boards skipped" if result["skipped"] else ""))
    return lines


def file_lines(read: dict) -> list[str]:
    """One line per problem file: its problems, those skipped and repaired, its warning."""
    return [f"{file}: {entry['problems']} problems read, {len(entry['skipped'])} skipped, "
            f"{len(entry['repaired'])} repaired" + (f"; warning: {entry['warning']}" if entry["warning"] else "")
            for file, entry in read["files"].items()]


def reading_lines(read: dict, comparisons: dict) -> list[str]:
    """`file_lines`, then one line per board skipped or repaired, of the problem files and of the
    compared Results files."""
    lines = file_lines(read)
    for file, entry in read["files"].items():
        lines += [f"{file} {_board_name(item)}: skipped: {item['reason']}" for item in entry["skipped"]]
        lines += [f"{file} board {item['board']}: repaired: {', '.join(item['repairs'])}" for item in entry["repaired"]]
    for results, by_agent in comparisons.items():
        result = next(iter(by_agent.values()), {})
        lines += [f"{results} {_board_name(item)}: not compared: {item['reason']}" for item in result.get("skipped", [])]
        lines += [f"{results} board {item['board']}: repaired: {', '.join(item['repairs'])}"
                  for item in result.get("repaired", [])]
    return lines


def _board_name(item: dict) -> str:
    """'board 7 (line 120)', 'board 7' or 'game at line 120'."""
    if item["board"] is None:
        return f"game at line {item['line']}"
    return f"board {item['board']}" + (f" (line {item['line']})" if item["line"] is not None else "")


def summary_lines(metrics: dict) -> list[str]:
    def cell(result: dict) -> str:
        return f"{result['points']:>4}/{result['max']:<4} {result['percent']:5.1f}%"
    lines = []
    for file, by_agent in metrics["files"].items():
        for agent, result in by_agent.items():
            lines.append(f"{file:<28} {agent:<12} all {cell(result['all'])}   uncontested "
                         f"{cell(result['uncontested'])} ({result['uncontested']['boards']})   scripted "
                         f"{cell(result['scripted'])} ({result['scripted']['boards']})")
    for pair, by_file in metrics["paired"].items():
        for file, result in by_file.items():
            if file == "all" and len(by_file) == 2:
                continue  # one file: its own line says it
            lines.append(f"{pair} on {file}: {result['difference']:+.1f} points of percent, 95% interval "
                         f"[{result['low']:+.1f}, {result['high']:+.1f}] over {result['boards']} boards")
    return lines


def hand_line(cards: Sequence[int]) -> str:
    """'S AK87  H A2  D Q94  C T432' (a void is '-')."""
    return "  ".join(f"{suit} {holding or '-'}" for suit, holding in zip("SHDC", hand_to_pbn(cards).split(".")))


def report_text(metrics: dict, rows: list[dict], problems: dict[str, dict[int, facit.Problem]]) -> str:
    """The totals, then each board: dealer, vulnerability, N and S hands, each agent's auction,
    contract and points against the top award, and where it parts from each compared Results file."""
    comparisons = metrics.get("comparisons", {})
    lines = ["Facit bidding challenge (our side N/S; points / sum of each board's top award)", "",
             *summary_lines(metrics), *comparison_lines(comparisons), "",
             *reading_lines(metrics["read"], comparisons), ""]
    for (file, board_number), board_rows in _by_board(rows).items():
        problem = problems[file][board_number]
        hands = facit.seat_hands(problem.deal)
        lines += [f"{file} board {board_number}: dealer {SEATS[problem.dealer]}, vulnerable {VUL_NAMES[problem.vulnerability]}, "
                  f"{board_rows[0]['kind']}" + (f" ({' '.join(problem.script)})" if problem.script else ""),
                  f"  N  {hand_line(hands[0])}", f"  S  {hand_line(hands[2])}",
                  f"  top {board_rows[0]['top_points']}: {board_rows[0]['top_contract']}"]
        for row in board_rows:
            lines.append(f"  {row['agent']:<12} {row['contract']:<6} {row['points']:>3}/{row['top_points']:<3} "
                         f"{SEATS[row['dealer']]}: {row['auction']}")
            lines += [f"  {'':<12} substituted {text}" for text in row["substitutions"]]
            for results, by_agent in comparisons.items():
                result = by_agent.get(row["agent"], {})
                if result.get("problems") != file:
                    continue
                theirs = next((board for board in result["per_board"] if board["board"] == board_number), None)
                if theirs is None:  # a Results file may hold only some of its problem file's boards
                    lines.append(f"  {'':<12} {results}: not on this board")
                    continue
                where = theirs["first_difference"]
                lines.append(f"  {'':<12} {results} ({theirs['their_points']}): " + (
                    "the same auction" if where is None else
                    f"differs at call {where['call']} ({where['seat']}): {where['ours']} against {where['theirs']}")
                    + ("" if theirs["their_script_kept"] else ", their auction leaves the script"))
        lines.append("")
    return "\n".join(lines)


def _by_board(rows: list[dict]) -> dict[tuple[str, int], list[dict]]:
    boards: dict[tuple[str, int], list[dict]] = {}
    for row in rows:
        boards.setdefault((row["file"], row["board"]), []).append(row)
    return boards


def results_pbn(rows: list[dict], problems: dict[int, facit.Problem], file: str, agent: str) -> str:
    """One agent's auctions of one problem file, shaped like BEN's Results files."""
    games, running = [f"% PBN 2.1\n% EXPORT\n% bridgeflow challenge: {file}, agent {agent}"], 0
    for row in rows:
        problem = problems[row["board"]]
        running += row["points"]
        contract = row["contract"]
        declarer, played = ("", "Pass") if contract == "Pass" else (contract[0], contract[1:])
        calls = [("PASS" if call == "P" else call) for call in row["auction"].split()]
        auction = "\n".join(" ".join(calls[start:start + 4]) for start in range(0, len(calls), 4))
        score_table = "".join(f" {_escape(award.contract):<5} {award.points:>4}\\n" for award in problem.table)
        games.append(
            f'[Event "{file}"]\n[Board "{row["board"]}"]\n[West "Facit"]\n[East "Facit"]\n'
            f'[North "{agent}"]\n[South "{agent}"]\n[Dealer "{SEATS[problem.dealer]}"]\n'
            f'[Vulnerable "{VUL_NAMES[problem.vulnerability]}"]\n[Deal "{problem.deal}"]\n'
            f'[Declarer "{declarer}"]\n[Contract "{played}"]\n[Scoring "Facit"]\n'
            f'[Auction "{SEATS[problem.dealer]}"]\n{auction}\n'
            f'{{\nScore Table:\n\n{score_table}\n\nFacit Score: {row["points"]:>4}\\nRunning Score: {running:>4}\n}}\n')
    return "\n".join(games)


def _escape(contract: str) -> str:
    """BEN's Score Table spelling: suit letters after the first character escaped (`4\\s`)."""
    return contract[0] + re.sub(r"([CDHS])", lambda match: "\\" + match.group(1).lower(), contract[1:])


def pbn_name(file: str, agent: str) -> str:
    """'BW.pbn', 'bsm@m/model.pt' -> 'BW-bsm_m_model.pt.pbn'."""
    return f"{Path(file).stem}-{re.sub(r'[^A-Za-z0-9.-]+', '_', agent)}.pbn"
