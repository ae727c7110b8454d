"""Atomic output (dataset/atomic.py): a reader sees the old file or the whole new one, never a
half-written one, and nothing temporary is left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset.atomic import atomic_path, write_json, write_table
from bridgeflow.dataset.schema import PARQUET_OPTIONS


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out" / "summary.json"
    write_json(path, {"boards": 1})
    with pytest.raises(RuntimeError), atomic_path(path) as temporary:
        temporary.write_text('{"boards": ')
        raise RuntimeError("killed half way")
    assert json.loads(path.read_text()) == {"boards": 1}
    assert sorted(p.name for p in path.parent.iterdir()) == ["summary.json"]


def test_a_folder_is_replaced_whole(tmp_path):
    folder = tmp_path / "cache"
    for version in ("old", "new"):
        with atomic_path(folder) as staging:
            staging.mkdir()
            (staging / f"{version}.npy").write_text(version)
    assert [p.name for p in folder.iterdir()] == ["new.npy"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]


def test_parquet_files_take_the_project_options(tmp_path):
    path = tmp_path / "boards.parquet"
    write_table(pa.table({"board": list(range(10))}), path)
    column = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert column.compression.lower() == PARQUET_OPTIONS["compression"]
    assert pq.read_table(path).column("board").to_pylist() == list(range(10))


# Renames that are not one file's atomic write, each with why it is not `atomic_path`.
OTHER_RENAMES = {
    "dataset/atomic.py": "the atomic write itself",
    "dataset/labels.py": "the label store's compaction: shards written first, renamed in after the journal commits",
    "pipelines/shards.py": "streaming shard writers closed across Beam bundles, and publishing a whole output folder",
}


def test_every_atomic_rename_is_the_atomic_module_or_says_why_not():
    repo = Path(__file__).resolve().parents[1]
    renaming = {str(path.relative_to(repo)) for folder in ("bridgeflow", "dataset", "pipelines", "training")
                for path in (repo / folder).rglob("*.py") if "os.replace(" in path.read_text() or ".rename(" in path.read_text()}
    assert renaming == set(OTHER_RENAMES)
