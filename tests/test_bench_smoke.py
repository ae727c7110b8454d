"""The NN-DDA, search, self-play and DMC benchmarks run end to end at a tiny size (their numbers are for a quiet
machine, not CI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bridgeflow.training.bidding.bsm_model import native_bf16

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_nndda.py"
BENCH_SELFPLAY = BENCH.with_name("bench_selfplay.py")


@pytest.mark.parametrize("arch", ["mlp", "suits"])
def test_bench_nndda_reports_rates_and_the_ratio_to_dds(arch):
    done = subprocess.run([sys.executable, str(BENCH), "--arch", arch, "--hidden", "16", "--deals", "3000",
                           "--sym-deals", "50", "--dds-deals", "2", "--repeats", "1", "--threads", "1", "--batch", "512"],
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout)
    assert result["config"]["arch"] == arch and result["batch"] == 512 and result["deals"] == 3000
    assert result["nn_deals_per_s"] > 0 and result["dds_deals_per_s"] > 0
    assert result["speedup_vs_dds"] == pytest.approx(result["nn_deals_per_s"] / result["dds_deals_per_s"])


def test_bench_selfplay_reports_decisions_per_cpu_second():
    done = subprocess.run([sys.executable, str(BENCH_SELFPLAY), "--tiny"], capture_output=True, text=True, timeout=300,
                          check=True)
    result = json.loads(done.stdout)
    assert result["boards"] == 3 and result["decisions"] >= 12 and 0 <= result["searched_share"] <= 1
    assert result["decisions_per_cpu_second"] > 0 and result["search"]["samples"] == 2


def test_bench_dmc_reports_actor_and_learner_rates():
    done = subprocess.run([sys.executable, str(BENCH.with_name("bench_dmc.py")), "--tiny", "--actors", "1"],
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout)
    assert result["actor_decisions_per_second"]["1"]["decisions_per_second"] > 0 and result["scaling"]["1"] == 1.0
    assert result["learner_updates_per_second"] > 0 and result["buffer_for_learner"] >= result["batch_size"]


def test_bench_search_reports_gain_time_and_fallbacks_per_position_kind(tmp_path):
    out = tmp_path / "curve.csv"
    subprocess.run([sys.executable, str(BENCH.with_name("bench_search.py")), "--tiny", "--csv", str(out)],
                   capture_output=True, text=True, timeout=300, check=True)
    import csv

    rows = list(csv.DictReader(out.open()))
    assert [int(r["samples"]) for r in rows] == [1, 2]
    for row in rows:
        assert float(row["cpu_ms"]) > 0 and float(row["cpu_p95_ms"]) >= 0 and int(row["boards"]) == 4
        kinds = json.loads(row["fallbacks"])
        assert set(kinds) <= {"opening", "uncontested", "defending", "competitive"}
        assert sum(c["decisions"] for c in kinds.values()) > 0


@pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bfloat16 (AVX512-BF16 or AMX)")
def test_bench_precision_replays_the_same_positions_at_both_precisions(tmp_path):
    out = tmp_path / "precision.json"
    subprocess.run([sys.executable, str(BENCH.with_name("bench_precision.py")), "--tiny", "--json", str(out)],
                   capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(out.read_text())
    assert result["boards"] == 4 and result["positions"] > 0 and 0 <= result["calls_changed"] <= result["positions"]
    assert result["fp32_mean_ms"] > 0 and result["bf16_mean_ms"] > 0
    assert result["speedup_mean"] == pytest.approx(result["fp32_mean_ms"] / result["bf16_mean_ms"])
