"""requirements.lock pins what `make` installs: every dependency pyproject.toml asks for, at a
version its range allows, and the environment running the tests is exactly the lock."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]


def locked() -> dict[str, Version]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_the_lock_pins_every_dependency_within_its_range():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(text) for text in [*project["dependencies"], *project["optional-dependencies"]["dev"]]]
    pins = locked()
    outside = [str(req) for req in wanted
               if canonicalize_name(req.name) not in pins or not req.specifier.contains(pins[canonicalize_name(req.name)],
                                                                                        prereleases=True)]
    assert outside == []


def test_make_installs_with_the_lock():
    makefile = (REPO / "Makefile").read_text()
    assert "-c requirements.lock -e '.[dev]'" in makefile and "$(VENV)/.installed: pyproject.toml requirements.lock" in makefile


def test_this_environment_is_the_lock():
    ours = canonicalize_name(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"])
    installed = {canonicalize_name(dist.metadata["Name"]): Version(dist.version) for dist in metadata.distributions()
                 if dist.metadata["Name"] and canonicalize_name(dist.metadata["Name"]) != ours}
    pins = locked()
    differs = {name: (str(pins.get(name)), str(version)) for name, version in installed.items() if pins.get(name) != version}
    assert differs == {}
