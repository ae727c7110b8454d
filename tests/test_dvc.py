"""dvc.yaml sees code: every stage lists among its deps the source files of the modules its
`bridgeflow <verb>` imports (transitively, package __init__ files aside), and nothing else from the
source tree, so a changed bidder or trainer reruns exactly the stages it affects; and it declares
every params.yaml section its verb reads, so a changed param reruns it too."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_layers import PACKAGE_DIRS, REPO, imported_modules, module_name, source_files

from bridgeflow.cli import VERBS
from bridgeflow.training.evaluation.agents import REGISTERED_BY


def import_graph() -> tuple[dict[str, Path], dict[str, set[str]]]:
    """Every module of the source tree -> its file, and -> the modules of the tree it imports; the
    agent registry imports the modules of REGISTERED_BY by name, so they count as its imports."""
    files = {module_name(path): path for path in source_files()}
    graph = {name: {target for _, target in imported_modules(path.read_text(), name, path.name == "__init__.py")
                    if target in files}
             for name, path in files.items()}
    graph["bridgeflow.training.evaluation.agents"] |= set(REGISTERED_BY.values())
    return files, graph


def code_of(module: str) -> list[str]:
    """The repository paths of `module` and everything it imports, as dvc.yaml lists them."""
    files, graph = import_graph()
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph[name]
    return sorted(str(files[name].relative_to(REPO)) for name in seen if files[name].name != "__init__.py")


def stages() -> dict[str, dict]:
    """Stage name -> its definition (a foreach stage by its `do` template)."""
    defined = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    return {name: stage.get("do", stage) for name, stage in defined.items()}


def verb_of(cmd: str) -> str:
    words = cmd.split()
    return words[words.index("bridgeflow") + 1]


def test_every_stage_depends_on_exactly_the_code_it_runs():
    wrong = {}
    for name, stage in stages().items():
        listed = sorted(dep for dep in stage.get("deps", []) if dep.split("/")[0] in PACKAGE_DIRS)
        wanted = code_of(VERBS[verb_of(stage["cmd"])][0])
        if listed != wanted:
            wrong[name] = {"missing": sorted(set(wanted) - set(listed)), "not imported": sorted(set(listed) - set(wanted))}
    assert wrong == {}


def test_the_code_of_a_verb_follows_its_imports():
    synth = code_of("bridgeflow.pipelines.synth")
    assert {"pipelines/synth.py", "training/bidding/rule_bidder.py", "dataset/pbn.py"} <= set(synth)
    assert "training/bidding/bsm_model.py" not in synth and "pipelines/ingest.py" not in synth


def sections_read(module: str) -> set[str]:
    """The params.yaml sections a verb's module declares it reads (`ParamsArguments(parser, SECTIONS, ...)`)."""
    import ast
    import importlib

    files, _ = import_graph()
    tree = ast.parse(files[module].read_text())
    read = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ParamsArguments":
            sections = node.args[1]
            read |= ({element.value for element in sections.elts} if isinstance(sections, ast.List)
                     else set(getattr(importlib.import_module(module), sections.id)))
    return read


def test_every_stage_declares_the_params_sections_its_verb_reads():
    missing = {}
    for name, stage in stages().items():
        declared = {entry.split(".")[0] for entry in stage.get("params", [])}
        read = sections_read(VERBS[verb_of(stage["cmd"])][0])
        if read - declared:
            missing[name] = sorted(read - declared)
    assert missing == {}
    assert sections_read("bridgeflow.training.evaluation.evaluate") == {"evaluate", "search"}
