"""The path to Flink/Spark/Dataflow: the same ingest job through Beam's portable runner protocol,
with SDK harnesses from an external worker pool on loopback, gives the same rows as a local run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bridgeflow.pipelines import ingest
from test_ingest import BAD_BOARD, GOOD_BOARD


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.fixture()
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


def _rows(folder: Path) -> list[dict]:
    return sorted((row for p in folder.glob("*.parquet") for row in pq.read_table(p).to_pylist()),
                  key=lambda row: row["record_id"])


def test_portable_runner_matches_local_run(tmp_path, worker_pool):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.pbn").write_text(GOOD_BOARD + "\n" + BAD_BOARD)
    (inputs / "b.pbn").write_text(GOOD_BOARD.replace('"1"', '"5"'))
    ingest.run(["--input", str(inputs), "--out", str(tmp_path / "local"), "--workers", "1"])
    manifest = ingest.run([
        "--input", str(inputs), "--out", str(tmp_path / "portable"),
        "--runner", "PortableRunner", "--job_endpoint=embed",
        "--environment_type=EXTERNAL", f"--environment_config=localhost:{worker_pool}",
    ])
    assert (manifest["accepted"], manifest["quarantined"]) == (2, 1)
    for table in ("records", "quarantine"):
        assert _rows(tmp_path / "portable" / table) == _rows(tmp_path / "local" / table)
