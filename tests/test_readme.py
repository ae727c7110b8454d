"""README.md's promises: the analyst queries it shows run on a real (small) pipeline output,
and the two commands it gives are the ones the Makefile and CI run."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from bridgeflow.dataset import catalog
from bridgeflow.pipelines import ddlabel, ingest, synth

README = Path(__file__).resolve().parents[1] / "README.md"


def analyst_queries() -> list[str]:
    section = README.read_text().split("## Analyst queries", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, re.S)


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Path:
    """synth -> ingest -> ddlabel (real DDS) -> catalog on 60 boards."""
    root = tmp_path_factory.mktemp("readme")
    synth.write_corpus(root / "synth", 60, seed=2026, format_name="pbn", boards_per_file=30)
    ingest.run(["--input", str(root / "synth"), "--out", str(root / "ingest"), "--workers", "1"])
    ddlabel.run(["--records", str(root / "ingest" / "records"), "--out", str(root / "dd"), "--workers", "2"])
    out = root / "bridge.duckdb"
    catalog.run(["--records", str(root / "ingest/records"), "--quarantine", str(root / "ingest/quarantine"),
                 "--dd", str(root / "dd"), "--out", str(out)])
    return out


def test_readme_has_five_analyst_queries():
    assert len(analyst_queries()) == 5


@pytest.mark.parametrize("index", range(5))
def test_analyst_query_runs_and_returns_rows(database, index):
    with duckdb.connect(str(database), read_only=True) as db:
        result = db.execute(analyst_queries()[index])
        columns = [d[0] for d in result.description]
        rows = result.fetchall()
    assert rows, f"query {index + 1} returned nothing"
    for row in rows:
        values = dict(zip(columns, row))
        for name, value in values.items():
            if name.startswith("share") or name.startswith("fraction"):
                assert 0 <= value <= 1, (name, value)
            if name == "boards":
                assert value > 0


def test_two_commands_are_the_makefile_targets_and_ci_runs_the_test_one():
    text = README.read_text()
    assert "make repro" in text and "make test" in text
    makefile = (README.parent / "Makefile").read_text()
    assert re.search(r"^repro:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (README.parent / ".ci" / "run").read_text()
