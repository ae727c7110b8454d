"""Shared test fixtures. Third-party data is read from ../shared next to the repository (CI has
it); tests that need it are skipped with a clear message when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED / "data").is_dir():
        pytest.skip(f"third-party data not found at {SHARED} (clone next to shared/ to run this test)")
    return SHARED


@pytest.fixture(scope="session")
def real_data(shared_dir: Path) -> Path:
    return shared_dir / "data" / "real"


@pytest.fixture(scope="session")
def oracle_data(shared_dir: Path) -> Path:
    return shared_dir / "data" / "oracle"
