"""README's numbers are the committed results: each row of its Results table names a results file
and a key, and the number shown is that value, rounded as printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bridgeflow import yardsticks
from bridgeflow.results import RESULTS, content_hash, lookup
from bridgeflow.training.model_files import SHIPPED

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
LONG_TABLES = REPO / "docs" / "results.md"  # README's Results section points here for the rest
ROW = re.compile(r"^\|(?P<label>[^|]+)\|\s*(?P<value>[^|]+?)\s*\|\s*\[(?P<file>results/[\w.-]+\.json)\]\([^)]*\)\s*"
                 r"`(?P<key>[\w.:+@/-][\w.:+@/ -]*[\w.:+@/-])`\s*\|$")
REQUIRED = {"schema_version", "name", "command", "git_commit", "date", "seed", "data", "models", "metrics"}


def results_lines() -> list[str]:
    """README's Results section and docs/results.md: the lines whose tables cite results files."""
    readme = README.read_text().split("\n## Results\n", 1)[1].split("\n## ", 1)[0]
    return readme.splitlines() + LONG_TABLES.read_text().splitlines()


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
    citing = [line for line in results_lines() if line.startswith("|") and "[results/" in line]
    assert len(citing) == len(results_rows())


@pytest.mark.parametrize("row", results_rows(), ids=lambda row: row["label"].strip())
def test_readme_number_is_the_committed_result(row):
    result = json.loads((RESULTS.parent / row["file"]).read_text())
    assert row["value"] == shown(lookup(result, row["key"]), row["value"])


BARE_AGENT = re.compile(r"(?:--agent\s+|[\[,:+=]\s*)(bsm|search)(?=[\s:,\]'+]|$)")
MODEL_FOLDER = re.compile(r"(?<![\w/.-])models/(\w+)")
BOARDS = re.compile(r"--boards\s+(\S+)")


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda path: path.stem)
def test_every_results_file_names_its_models_and_boards_by_path_and_hash(path):
    """A reader can rerun it: no agent left to a default model (a bare `bsm` or `search` means
    whatever the default is that day, unless --bsm names it), every shipped model the command
    names and every board list it plays has its hash in the file."""
    result = json.loads(path.read_text())
    command = result["command"]
    if "--bsm " not in command:
        assert not BARE_AGENT.findall(command), f"{path.name}: name the model of {BARE_AGENT.findall(command)}"
    for folder in set(MODEL_FOLDER.findall(command)):
        assert any(key.startswith(f"models/{folder}/") for key in result["models"]), f"{path.name}: no hash of models/{folder}"
    for boards in BOARDS.findall(command):
        assert boards in result["data"], f"{path.name}: no hash of the board list {boards}"


def test_the_first_results_table_is_the_yardsticks_and_agrees_with_their_sources():
    """README's first table is `python -m bridgeflow.yardsticks --markdown` of today's results files,
    and results/yardsticks.json holds the same rows and the hashes of the files they come from."""
    rows = yardsticks.compute()
    section = README.read_text().split("\n## Results\n", 1)[1]
    first_table = next(i for i, line in enumerate(section.splitlines()) if line.startswith("|"))
    table = yardsticks.markdown(rows)
    assert "\n".join(section.splitlines()[first_table:first_table + len(table.splitlines())]) == table
    committed = json.loads((RESULTS / "yardsticks.json").read_text())
    assert committed["metrics"]["rows"] == json.loads(json.dumps(rows))
    assert committed["data"] == {path: content_hash(REPO / path) for path in yardsticks.sources()}
    assert yardsticks.PLOT.is_file() and f"]({yardsticks.PLOT.relative_to(REPO)})" in section


def test_the_default_agent_leads_the_yardsticks_of_our_own():
    """The default (the search over the default network) is the strongest of our agents in the table."""
    rows = {row["agent"]: row for row in yardsticks.compute()}
    ours = [rows[agent] for agent in ("rule", "bsm@models/bsm_pi")]
    default = rows[yardsticks.DEFAULT]
    assert all(default["vs_ben_nosearch"]["mean_imps"] > row["vs_ben_nosearch"]["mean_imps"] for row in ours)
    assert f"@models/{SHIPPED['BSM']}" in yardsticks.DEFAULT
