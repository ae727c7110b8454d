"""Shared test fixtures. Third-party data is read from ../shared next to the repository (CI has
it); tests that need it are skipped with a clear message when it is absent, or fail with it when
BRIDGEFLOW_REQUIRE_SHARED is set (`.ci/run` sets it, so CI cannot pass by skipping them). The
browser tests need Chromium (`chromium`) the same way, failing under BRIDGEFLOW_REQUIRE_CHROMIUM."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = Path(__file__).resolve().parent
REQUIRE_SHARED = "BRIDGEFLOW_REQUIRE_SHARED"
REQUIRE_CHROMIUM = "BRIDGEFLOW_REQUIRE_CHROMIUM"


def absent(message: str, flag: str) -> None:
    """Skip the test for what it lacks, or fail it when `flag` says this machine must have it."""
    if os.environ.get(flag, "") not in ("", "0"):
        pytest.fail(f"{message} and {flag}={os.environ[flag]} requires it", pytrace=False)
    pytest.skip(message)


def shared_folder(folder: Path) -> Path:
    """`folder` of ../shared, or skip the test (fail it under BRIDGEFLOW_REQUIRE_SHARED) if absent."""
    if not folder.is_dir():
        absent(f"third-party data not found at {folder} (clone next to shared/ to run this test)", REQUIRE_SHARED)
    return folder


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    shared_folder(SHARED / "data")
    return SHARED


@pytest.fixture(scope="session")
def real_data(shared_dir: Path) -> Path:
    return shared_folder(shared_dir / "data" / "real")


@pytest.fixture(scope="session")
def oracle_data(shared_dir: Path) -> Path:
    return shared_folder(shared_dir / "data" / "oracle")


@pytest.fixture(scope="session")
def ben_dir(shared_dir: Path) -> Path:
    """BEN's code and networks (third_party/ben), for the `ben` agents' tests."""
    return shared_folder(shared_dir / "third_party" / "ben")


@pytest.fixture(scope="session")
def chromium() -> str:
    """The headless browser of the report's tests, or skip (fail under BRIDGEFLOW_REQUIRE_CHROMIUM)."""
    from bridgeflow.training.evaluation.headless import CHROMIUM_VARIABLE, chromium_binary

    binary = chromium_binary()
    if binary is None:
        absent(f"Chromium not found (${CHROMIUM_VARIABLE}, /usr/bin/chromium or PATH; Debian: apt-get install "
               f"chromium) to run the browser tests", REQUIRE_CHROMIUM)
    return binary


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> Path:
    """Tiny untrained checkpoints on disk in the trainers' formats: a BSM (model.pt) and an
    NN-DDA (nndda.pt) in one folder."""
    import torch

    from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
    from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig

    folder = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    bsm = BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0))
    torch.save({"model_config": vars(bsm.config), "model": bsm.state_dict()}, folder / "model.pt")
    nndda = NNDDA(NNDDAConfig(hidden=16, layers=1))
    torch.save({"model_config": vars(nndda.config), "model": nndda.state_dict()}, folder / "nndda.pt")
    return folder
