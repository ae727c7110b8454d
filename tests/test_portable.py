"""The path to Flink/Spark/Dataflow: each Beam job (ingest, ddlabel, selfplay) through Beam's
portable runner protocol, with SDK harnesses from an external worker pool on loopback, gives the
same rows as a local FnApiRunner run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch
from test_dd import cheap_deals
from test_ddlabel_pipeline import label, labels_of, write_records
from test_ingest import BAD_BOARD, GOOD_BOARD
from test_selfplay_pipeline import argv as selfplay_argv

from bridgeflow.pipelines import ddlabel, ingest, selfplay


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def worker_pool():
    port = _free_port()
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # it spawns `python`
    pool = subprocess.Popen(
        [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", f"--service_port={port}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("localhost", port)) == 0:
                break
        time.sleep(0.2)
    else:
        pool.kill()
        pytest.fail("worker pool did not start listening")
    yield port
    pool.kill()
    pool.wait()


def portable(port: int) -> list[str]:
    """The runner flags of docs/pipeline.md's local external worker pool."""
    return ["--runner", "PortableRunner", "--job_endpoint=embed",
            "--environment_type=EXTERNAL", f"--environment_config=localhost:{port}"]


def _rows(folder: Path, *key: str) -> list[dict]:
    return sorted((row for p in folder.glob("*.parquet") for row in pq.read_table(p).to_pylist()),
                  key=lambda row: tuple(row[name] for name in key))


def test_ingest_on_the_portable_runner_matches_a_local_run(tmp_path, worker_pool):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.pbn").write_text(GOOD_BOARD + "\n" + BAD_BOARD)
    (inputs / "b.pbn").write_text(GOOD_BOARD.replace('"1"', '"5"'))
    ingest.run(["--input", str(inputs), "--out", str(tmp_path / "local"), "--workers", "1"])
    manifest = ingest.run(["--input", str(inputs), "--out", str(tmp_path / "portable"), *portable(worker_pool)])
    assert (manifest["accepted"], manifest["quarantined"]) == (2, 1)
    for table in ("records", "quarantine"):
        assert _rows(tmp_path / "portable" / table, "record_id") == _rows(tmp_path / "local" / table, "record_id")


def test_ddlabel_on_the_portable_runner_matches_a_local_run(tmp_path, worker_pool):
    write_records(tmp_path / "records" / "a.parquet", cheap_deals(12, seed=11))
    local = label(tmp_path / "records", tmp_path / "local")
    summary = ddlabel.run(["--records", str(tmp_path / "records"), "--out", str(tmp_path / "portable"),
                           *portable(worker_pool)])
    assert summary["solved"] == local["solved"] == 12
    assert labels_of(tmp_path / "portable") == labels_of(tmp_path / "local")


def test_selfplay_on_the_portable_runner_matches_a_local_run(tmp_path, worker_pool, models):
    torch.set_num_threads(1)
    searched = ("--set", "skip_above=0.95")  # most decisions searched, so the search runs on the workers
    local = selfplay.run(selfplay_argv(models, tmp_path / "local", *searched))
    summary = selfplay.run(selfplay_argv(models, tmp_path / "portable", *searched, *portable(worker_pool)))
    assert summary["searched"] == local["searched"] > 0
    assert summary["key"] == local["key"]
    key = ("board", "position")
    assert _rows(tmp_path / "portable" / "decisions", *key) == _rows(tmp_path / "local" / "decisions", *key)
