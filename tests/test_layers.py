"""The house rules: imports run one way (dataset <- training <- pipelines <- cli) and in
no cycle between sub-packages (e.g. training.evaluation <-> training.dmc), and the wheel
carries every package of the source tree (no test toys) and works installed, outside the tree."""

from __future__ import annotations

import ast
import email
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from bridgeflow.training.home import HOME_VARIABLE
from bridgeflow.training.model_files import SHIPPED

REPO = Path(__file__).resolve().parents[1]
# The distribution's name on PyPI, where `bridgeflow` is somebody else's project (the import package is bridgeflow).
DISTRIBUTION = "bridgeflow-bidding"
# source folder -> package it installs as (pyproject.toml's package-dir)
PACKAGE_DIRS = {"bridgeflow": "bridgeflow", "dataset": "bridgeflow.dataset",
                "pipelines": "bridgeflow.pipelines", "training": "bridgeflow.training"}
# layer -> layers it must never import
FORBIDDEN = {
    "dataset": {"training", "pipelines", "cli"},
    "training": {"pipelines", "cli"},
    "pipelines": {"cli"},
}


def module_name(path: Path, root: Path = REPO) -> str:
    """training/dd/nndda_model.py -> bridgeflow.training.dd.nndda_model (a package: its __init__)."""
    folder, *rest = path.relative_to(root).with_suffix("").parts
    parts = PACKAGE_DIRS[folder].split(".") + rest
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in `source`, at module level or inside functions."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]  # `from pkg import module`
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "bridgeflow" or len(parts) == 1:
        return None
    return parts[1] if parts[1] in (*FORBIDDEN, "cli") else None


def back_arrows(source: str, module: str, is_package: bool = False) -> list[str]:
    """The imports of `module` that run back up the layers, as 'module:line -> target'."""
    own = layer_of(module)
    return [f"{module}:{line} -> {target}" for line, target in imported_modules(source, module, is_package)
            if layer_of(target) in FORBIDDEN.get(own, ())]


def source_files() -> list[Path]:
    return sorted(path for folder in PACKAGE_DIRS for path in (REPO / folder).rglob("*.py"))


def test_no_import_runs_back_up_the_layers():
    arrows = [arrow for path in source_files()
              for arrow in back_arrows(path.read_text(), module_name(path), path.name == "__init__.py")]
    assert arrows == []


def test_the_check_sees_back_arrows_inside_functions_and_relative_imports():
    source = ("from ..search import sampling\n"
              "def label():\n"
              "    from bridgeflow.pipelines.ddlabel import read_labels\n"
              "    from ... import pipelines\n")
    assert back_arrows(source, "bridgeflow.training.dd.estimator") == [
        "bridgeflow.training.dd.estimator:3 -> bridgeflow.pipelines.ddlabel",
        "bridgeflow.training.dd.estimator:3 -> bridgeflow.pipelines.ddlabel.read_labels",
        "bridgeflow.training.dd.estimator:4 -> bridgeflow.pipelines",
    ]
    assert back_arrows("from bridgeflow.training.bidding import rule_bidder\n", "bridgeflow.dataset.synth") == [
        "bridgeflow.dataset.synth:1 -> bridgeflow.training.bidding",
        "bridgeflow.dataset.synth:1 -> bridgeflow.training.bidding.rule_bidder",
    ]
    assert back_arrows("from bridgeflow.training.bidding import rule_bidder\n", "bridgeflow.pipelines.synth") == []


def sub_package(module: str) -> str | None:
    """bridgeflow.training.evaluation.agents -> bridgeflow.training.evaluation (None outside a
    sub-package of a layer)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[0] != "bridgeflow" or parts[1] not in FORBIDDEN:
        return None
    folder = next(folder for folder, package in PACKAGE_DIRS.items() if package == f"bridgeflow.{parts[1]}")
    return ".".join(parts[:3]) if (REPO / folder / parts[2]).is_dir() else None


def package_cycles(imports: dict[str, list[tuple[int, str]]]) -> list[list[str]]:
    """The cycles of imports between sub-packages, from each module's (line, target) imports:
    each cycle as 'module:line -> target' arrows, one per sub-package it passes."""
    arrows: dict[str, dict[str, str]] = {}  # sub-package -> sub-package it imports -> the first such import
    for module, found in sorted(imports.items()):
        source = sub_package(module)
        for line, target in found:
            imported = sub_package(target)
            if source and imported and imported != source:
                arrows.setdefault(source, {}).setdefault(imported, f"{module}:{line} -> {target}")
    cycles, seen = [], set()

    def walk(path: list[str]) -> None:
        for imported in sorted(arrows.get(path[-1], {})):
            if imported == path[0]:
                key = frozenset(path)
                if key not in seen:
                    seen.add(key)
                    cycles.append([arrows[a][b] for a, b in zip(path, path[1:] + path[:1])])
            elif imported not in path and imported > path[0]:  # each cycle once, from its first sub-package
                walk(path + [imported])

    for start in sorted(arrows):
        walk([start])
    return cycles


def test_no_import_cycle_between_sub_packages():
    imports = {module_name(path): imported_modules(path.read_text(), module_name(path), path.name == "__init__.py")
               for path in source_files()}
    assert package_cycles(imports) == []


def test_the_cycle_check_sees_a_cycle_through_a_function_level_import():
    imports = {"bridgeflow.training.evaluation.evaluate": [(78, "bridgeflow.training.dmc.q_model")],
               "bridgeflow.training.dmc.check": [(24, "bridgeflow.training.evaluation.evaluate")],
               "bridgeflow.training.search.monte_carlo": [(3, "bridgeflow.training.bidding.bidder")],
               "bridgeflow.training.bidding.bsm_train": [(9, "bridgeflow.training.model_files")]}
    assert package_cycles(imports) == [["bridgeflow.training.dmc.check:24 -> bridgeflow.training.evaluation.evaluate",
                                        "bridgeflow.training.evaluation.evaluate:78 -> bridgeflow.training.dmc.q_model"]]
    source = "def make():\n    from bridgeflow.training.dmc.q_model import load_q\n"
    imports["bridgeflow.training.evaluation.evaluate"] = imported_modules(source, "bridgeflow.training.evaluation.evaluate", False)
    assert len(package_cycles(imports)) == 1


def test_every_package_has_a_docstring():
    missing = [module_name(path) for path in source_files()
               if path.name == "__init__.py" and ast.get_docstring(ast.parse(path.read_text())) is None]
    assert missing == []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the source copy it was built from): built offline from a copy of the source
    tree, as `pip install .` would build it."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    for folder in (*PACKAGE_DIRS, "contrib"):  # contrib/ (GPL-3.0, the BEN server) must stay out
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--no-index", "--wheel-dir", str(tmp_path / "dist"), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (built_wheel,) = (tmp_path / "dist").glob(f"{DISTRIBUTION.replace('-', '_')}-*.whl")
    return built_wheel, source


def test_the_wheel_carries_every_module(wheel):
    wheel, source = wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    (info,) = {name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA")}
    wheel_metadata = email.message_from_string(zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode())
    assert wheel_metadata["Name"] == DISTRIBUTION and wheel_metadata["License-Expression"] == "Apache-2.0"
    assert "bridgeflow = bridgeflow.cli:main" in zipfile.ZipFile(wheel).read(f"{info}/entry_points.txt").decode()
    expected = {module_name(path, source).replace(".", "/") + ("/__init__.py" if path.name == "__init__.py" else ".py")
                for path in sorted(source.rglob("*.py")) if path.relative_to(source).parts[0] in PACKAGE_DIRS}
    assert sorted(expected - names) == []
    assert {"bridgeflow/training/bidding/__init__.py", "bridgeflow/training/dd/nndda_model.py"} <= names
    assert "bridgeflow/training/evaluation/board_report.html" in names  # `bridgeflow report`'s page (package data)
    assert not [name for name in names if name.startswith(("tests/", "benchmarks/", "contrib/", "tensorflow/", "dds3/"))
                or "ben_server" in name or "toy" in name]


def test_installed_it_works_from_another_folder(wheel, tmp_path, shared_dir):
    """The wheel in a fresh venv outside the tree (its dependencies from this environment), run
    from an empty folder: shipped models come through BRIDGEFLOW_HOME, and without it the error
    says so in one line."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site_packages,) = venv.glob("lib/python*/site-packages")
    (site_packages / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                                "--quiet", "--no-deps", "--no-index", str(wheel[0])], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", HOME_VARIABLE)}

    def bridgeflow(*argv: str, **more: str) -> subprocess.CompletedProcess:
        return subprocess.run([venv / "bin" / "bridgeflow", *argv], cwd=elsewhere, capture_output=True, text=True,
                              env=environment | more, timeout=300)

    position = ("--hand", "K843.Q92.A75.J64", "--auction", "1H P", "--dealer", "N", "--vul", "none")
    lost = bridgeflow("bid", *position)
    assert lost.returncode == 2 and "Traceback" not in lost.stderr
    assert lost.stderr.strip().splitlines()[-1].startswith("bridgeflow bid: error: no BSM given") and HOME_VARIABLE in lost.stderr
    found = bridgeflow("bid", *position, "--set", "min_prior=0", **{HOME_VARIABLE: str(REPO)})  # search even a sure call
    assert found.returncode == 0, found.stderr
    assert str(site_packages) in subprocess.run([venv / "bin" / "python", "-c", "import bridgeflow; print(bridgeflow.__file__)"],
                                                cwd=elsewhere, capture_output=True, text=True, env=environment).stdout
    default = f"models/{SHIPPED['BSM']}"  # the strongest shipped network (models/README.md)
    assert f"the shipped default, {default}" in found.stderr and f"{REPO}/{default}/model.pt" in found.stderr
    assert "the shipped default, models/nndda" in found.stderr and "\ncall: " in found.stdout and "rolled out" in found.stdout
    problems = shared_dir / "data" / "challenges" / "lorserker_ben" / "Challenges" / "BW.pbn"
    played = bridgeflow("challenge", "--problems", str(problems), "--agent", "rule", "--out", "out")
    assert played.returncode == 0, played.stderr
    assert json.loads((elsewhere / "out" / "metrics.json").read_text())


def test_readme_architecture_lists_every_package():
    block = (REPO / "README.md").read_text().split("## Architecture", 1)[1].split("```", 2)[1]
    first_words = [line.split()[0] for line in block.splitlines() if line.strip()]
    listed = {word.rstrip("/") for word in first_words if word.endswith("/")}
    packages = {path.parent.name for folder in ("dataset", "pipelines", "training")
                for path in (REPO / folder).rglob("__init__.py")}
    assert listed == packages
