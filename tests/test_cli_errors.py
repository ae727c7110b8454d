"""A user's mistake on the command line is one line on stderr and exit status 2, never a
traceback, and leaves nothing behind; every model loader takes a file or its trainer's folder."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

from bridgeflow.cli import main
from bridgeflow.dataset.errors import InputError
from bridgeflow.training import model_files
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.dd.dd_estimator import DDEstimator

HAND = "K843.Q92.A75.J64"


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    """(exit status, stderr) of `bridgeflow ARGV`, argparse's own exits included."""
    try:
        status = main(list(argv))
    except SystemExit as exit_:
        status = exit_.code
    return status, capsys.readouterr().err


def one_line_error(err: str) -> str:
    """The error line (argparse's usage line above it allowed); fails on a traceback."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("usage:")
             and not line.startswith(" ")]
    assert len(lines) == 1, err
    return lines[0]



@pytest.mark.parametrize("options, named", [
    (["--hand", "AKQ.xx"], "--hand"),
    (["--hand", "K843.Q92.A75.J6"], "12 cards"),
    (["--hand", "K843.Q92.A75.J44"], "C4 more than once"),
    (["--auction", "1S 1H"], "1H is not higher than 1S"),
    (["--auction", "2C P P P P"], "auction already ended"),
    (["--auction", "P P P P"], "has already ended"),
    (["--auction", "X"], "double only"),
    (["--auction", "XX"], "redouble only"),
    (["--auction", "1C XX"], "redouble only"),
    (["--auction", "1Z"], "not a call: '1Z'"),
    (["--dealer", "Q"], "--dealer 'Q'"),
    (["--vul", "red"], "--vul"),
])
@pytest.mark.parametrize("verb", ["explain", "bid"])
def test_bad_decisions_are_one_line_errors(capsys, tmp_path, verb, options, named):
    base = {"--hand": HAND, "--auction": "", "--dealer": "N", "--vul": "none"}
    base.update(dict(zip(options[::2], options[1::2])))
    argv = [verb, *[item for pair in base.items() for item in pair], "--out" if verb == "explain" else "--json",
            *([str(tmp_path / "e.png")] if verb == "explain" else [])]
    status, err = run_cli(capsys, *argv)
    assert status == 2
    assert named in one_line_error(err)
    assert not (tmp_path / "e.png").exists()


@pytest.mark.parametrize("content, named", [
    (None, "no such file or folder"),
    (b"", "not a readable model file"),
    (b"not a checkpoint at all", "not a readable model file"),
    ("truncated", "not a readable model file"),
    ("nndda", "not a BSM model file"),
])
def test_bad_checkpoints_are_one_line_errors(capsys, tmp_path, models, content, named):
    checkpoint = tmp_path / "model.pt"
    if content == "truncated":
        checkpoint.write_bytes((models / "model.pt").read_bytes()[:2000])
    elif content == "nndda":
        checkpoint.write_bytes((models / "nndda.pt").read_bytes())
    elif content is not None:
        checkpoint.write_bytes(content)
    status, err = run_cli(capsys, "explain", "--hand", HAND, "--checkpoint", str(checkpoint),
                          "--out", str(tmp_path / "e.png"))
    assert status == 2
    line = one_line_error(err)
    assert named in line and str(checkpoint) in line


def test_without_a_model_flag_the_shipped_one_is_used_and_named(capsys, caplog, tmp_path, monkeypatch, models):
    caplog.set_level(logging.INFO, logger="bridgeflow.models")
    monkeypatch.setattr(model_files, "MODELS", tmp_path / "models")  # nothing shipped
    status, err = run_cli(capsys, "bid", "--hand", HAND, "--auction", "1H P", "--dealer", "N")
    assert status == 2
    assert f"no BSM given (--bsm) and none shipped in {tmp_path / 'models' / 'bsm'}" in one_line_error(err)
    for folder, name in (("bsm", "model.pt"), ("nndda", "nndda.pt")):
        (tmp_path / "models" / folder).mkdir(parents=True)
        (tmp_path / "models" / folder / name).write_bytes((models / name).read_bytes())
    status, err = run_cli(capsys, "bid", "--hand", HAND, "--auction", "1H P", "--dealer", "N", "--json",
                          "--set", "samples=2", "--set", "oversample=2")
    assert status == 0, err
    for what, name in (("BSM", "bsm/model.pt"), ("NN-DDA", "nndda/nndda.pt")):
        assert f"{what}: {tmp_path / 'models' / name} (sha256 " in caplog.text  # says which model it loaded


def test_missing_inputs_name_the_path_and_leave_nothing_behind(capsys, tmp_path):
    missing = tmp_path / "missing"
    status, err = run_cli(capsys, "evaluate", "--dd", str(missing), "--out", str(tmp_path / "eval"))
    assert status == 2 and str(missing) in one_line_error(err) and "no such file" in err
    status, err = run_cli(capsys, "ddlabel", "--records", str(missing), "--out", str(tmp_path / "dd"),
                          "--runner", "DirectRunner")
    assert status == 2 and str(missing) in one_line_error(err)
    status, err = run_cli(capsys, "catalog", "--records", str(missing), "--quarantine", str(missing),
                          "--out", str(tmp_path / "db" / "bridge.duckdb"))
    assert status == 2 and str(missing) in one_line_error(err)
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_every_model_loader_takes_the_file_or_its_folder(models, tmp_path):
    for load, name in ((Bidder.load, "model.pt"), (DDEstimator.load, "nndda.pt")):
        from_folder, from_file = load(models), load(models / name)
        first = next(iter(from_folder.model.state_dict().values()))
        assert torch.equal(first, next(iter(from_file.model.state_dict().values())))
        with pytest.raises(InputError, match="no such file or folder"):
            load(tmp_path)


@pytest.mark.parametrize("match, named", [("bsm", "a match is A:B, partner:A+B or partner:A, not 'bsm'"),
                                          ("partner:rule+nobody", "partner:rule+nobody: unknown agent 'nobody'"),
                                          ("ben@x.pt:rule", "BEN takes no @CHECKPOINT")])
def test_a_bad_match_is_one_line_naming_it(capsys, tmp_path, match, named):
    dd = Path(__file__).resolve().parents[1] / "datasets" / "dd_labels"
    status, err = run_cli(capsys, "evaluate", "--dd", str(dd), "--out", str(tmp_path / "eval"), "--params",
                          str(tmp_path / "absent.yaml"), "--set", "boards=2", "--set", f"matches=[{match}]")
    assert status == 2 and named in one_line_error(err) and "evaluate.matches" in err
    assert not (tmp_path / "eval").exists()
