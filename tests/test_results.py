"""README's numbers are the committed results: each row of its Results table names a results file
and a key, and the number shown is that value, rounded as printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bridgeflow.results import RESULTS, lookup

README = Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"^\|(?P<label>[^|]+)\|\s*(?P<value>[^|]+?)\s*\|\s*\[(?P<file>results/[\w.-]+\.json)\]\([^)]*\)\s*"
                 r"`(?P<key>[\w.:+@/-][\w.:+@/ -]*[\w.:+@/-])`\s*\|$")
REQUIRED = {"schema_version", "name", "command", "git_commit", "date", "seed", "data", "models", "metrics"}


def results_lines() -> list[str]:
    return README.read_text().split("\n## Results\n", 1)[1].split("\n## ", 1)[0].splitlines()


def results_rows() -> list[dict]:
    return [match.groupdict() for match in map(ROW.match, results_lines()) if match]


def shown(value: float, printed: str) -> str:
    """`value` printed the way `printed` is: a percentage, a signed or plain decimal, or a count."""
    if printed.endswith("%"):
        decimals = len(printed[:-1].partition(".")[2])
        return f"{100 * value:.{decimals}f}%"
    decimals = len(printed.partition(".")[2])
    text = f"{value:+,.{decimals}f}" if printed[0] in "+-" else f"{value:,.{decimals}f}"
    return text


def test_every_results_file_says_how_it_was_made():
    files = sorted(RESULTS.glob("*.json"))
    assert files
    for path in files:
        result = json.loads(path.read_text())
        assert REQUIRED <= result.keys(), path
        assert result["name"] == path.stem and result["command"] and result["metrics"]


def test_readme_has_a_results_table():
    assert len(results_rows()) >= 3


def test_every_row_citing_a_results_file_is_checked():
    """A row the pattern misses (a key with an unexpected character) would go unchecked."""
    citing = [line for line in results_lines() if line.startswith("|") and "](results/" in line]
    assert len(citing) == len(results_rows())


@pytest.mark.parametrize("row", results_rows(), ids=lambda row: row["label"].strip())
def test_readme_number_is_the_committed_result(row):
    result = json.loads((RESULTS.parent / row["file"]).read_text())
    assert row["value"] == shown(lookup(result, row["key"]), row["value"])
