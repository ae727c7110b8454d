"""CI always has ../shared and Chromium: `.ci/run` sets BRIDGEFLOW_REQUIRE_SHARED and
BRIDGEFLOW_REQUIRE_CHROMIUM (installing Chromium where it is missing), under which a test that would
skip for missing third-party data or browser fails instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REQUIRE_SHARED = "BRIDGEFLOW_REQUIRE_SHARED"
REQUIRE_CHROMIUM = "BRIDGEFLOW_REQUIRE_CHROMIUM"

USES_SHARED = '''
def test_shared(shared_dir): pass
def test_real(real_data): pass
def test_oracle(oracle_data): pass
'''


@pytest.mark.parametrize("flag, present", [(None, []), ("0", []), ("1", []), ("1", ["real"])],
                         ids=["skips", "skips-flag-0", "fails", "fails-oracle"])
def test_missing_shared_data_skips_unless_the_ci_flag_is_set(tmp_path, flag, present):
    """tests/conftest.py in a clone next to no shared/ (or one with data/real only)."""
    tests = tmp_path / "clone" / "tests"
    tests.mkdir(parents=True)
    shutil.copy(REPO / "tests" / "conftest.py", tests)
    (tests / "test_uses_shared.py").write_text(USES_SHARED)
    for name in present:
        (tmp_path / "shared" / "data" / name).mkdir(parents=True)
    env = {name: value for name, value in os.environ.items() if name != REQUIRE_SHARED}
    if flag is not None:
        env[REQUIRE_SHARED] = flag
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tests)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    absent = tmp_path / "shared" / "data" / "oracle" if present else tmp_path / "shared" / "data"
    missing = f"third-party data not found at {absent} (clone next to shared/ to run this test)"
    if flag in (None, "0"):
        assert result.returncode == 0 and "3 skipped" in result.stdout and missing in result.stdout, result.stdout
    else:  # each failing test's error section gives the whole message
        failing = 1 if present else 3
        assert result.returncode == 1 and f"{failing} error" in result.stdout, result.stdout
        assert result.stdout.count(f"{missing} and {REQUIRE_SHARED}={flag} requires it") == failing, result.stdout


USES_CHROMIUM = """
def test_browser(chromium): pass
"""


@pytest.mark.parametrize("flag", [None, "1"], ids=["skips", "fails"])
def test_missing_chromium_skips_unless_the_ci_flag_is_set(tmp_path, flag):
    """tests/conftest.py's `chromium` on a machine without the browser (BRIDGEFLOW_CHROMIUM names none)."""
    tests = tmp_path / "tests"
    tests.mkdir()
    shutil.copy(REPO / "tests" / "conftest.py", tests)
    (tests / "test_uses_chromium.py").write_text(USES_CHROMIUM)
    env = {name: value for name, value in os.environ.items() if name != REQUIRE_CHROMIUM}
    env["BRIDGEFLOW_CHROMIUM"] = str(tmp_path / "no-chromium")
    if flag is not None:
        env[REQUIRE_CHROMIUM] = flag
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tests)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    missing = "Chromium not found ($BRIDGEFLOW_CHROMIUM, /usr/bin/chromium or PATH; Debian: apt-get install chromium)"
    if flag is None:
        assert result.returncode == 0 and "1 skipped" in result.stdout and missing in result.stdout, result.stdout
    else:
        assert result.returncode == 1 and "1 error" in result.stdout, result.stdout
        assert f"to run the browser tests and {REQUIRE_CHROMIUM}=1 requires it" in result.stdout, result.stdout


def test_ci_exports_the_flags_installs_chromium_and_runs_exactly_make_test():
    commands = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert commands == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', f"export {REQUIRE_SHARED}=1",
                        f"export {REQUIRE_CHROMIUM}=1",
                        "[ -x /usr/bin/chromium ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get "
                        "install -y -qq chromium >/dev/null; }", "make test"]
