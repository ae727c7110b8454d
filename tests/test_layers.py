"""The house rules: imports run one way (dataset <- training <- pipelines <- cli), and the wheel
carries every package of the source tree."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
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


def test_every_package_has_a_docstring():
    missing = [module_name(path) for path in source_files()
               if path.name == "__init__.py" and ast.get_docstring(ast.parse(path.read_text())) is None]
    assert missing == []


def test_the_wheel_carries_every_module(tmp_path):
    """Built offline from a copy of the source tree, as `pip install .` would build it."""
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
    (wheel,) = (tmp_path / "dist").glob("bridgeflow-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {module_name(path, source).replace(".", "/") + ("/__init__.py" if path.name == "__init__.py" else ".py")
                for path in sorted(source.rglob("*.py")) if path.relative_to(source).parts[0] in PACKAGE_DIRS}
    assert sorted(expected - names) == []
    assert {"bridgeflow/training/bidding/__init__.py", "bridgeflow/training/dd/nndda_model.py"} <= names
    assert "bridgeflow/training/evaluation/board_report.html" in names  # `bridgeflow report`'s page (package data)
    assert not [name for name in names if name.startswith(("tests/", "benchmarks/", "contrib/", "tensorflow/", "dds3/"))
                or "ben_server" in name]


def test_readme_architecture_lists_every_package():
    block = (REPO / "README.md").read_text().split("## Architecture", 1)[1].split("```", 2)[1]
    first_words = [line.split()[0] for line in block.splitlines() if line.strip()]
    listed = {word.rstrip("/") for word in first_words if word.endswith("/")}
    packages = {path.parent.name for folder in ("dataset", "pipelines", "training")
                for path in (REPO / folder).rglob("__init__.py")}
    assert listed == packages
