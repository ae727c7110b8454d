"""A user's mistake on the command line is one line on stderr and exit status 2, never a
traceback, and leaves nothing behind; every model loader takes a file or its trainer's folder."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from bridgeflow import cli
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
    default = model_files.SHIPPED["BSM"]
    status, err = run_cli(capsys, "bid", "--hand", HAND, "--auction", "1H P", "--dealer", "N")
    assert status == 2
    assert f"no BSM given (--bsm) and none shipped in {tmp_path / 'models' / default}" in one_line_error(err)
    for folder, name in ((default, "model.pt"), ("nndda", "nndda.pt")):
        (tmp_path / "models" / folder).mkdir(parents=True)
        (tmp_path / "models" / folder / name).write_bytes((models / name).read_bytes())
    status, err = run_cli(capsys, "bid", "--hand", HAND, "--auction", "1H P", "--dealer", "N", "--json",
                          "--set", "samples=2", "--set", "oversample=2")
    assert status == 0, err
    for what, name in (("BSM", f"{default}/model.pt"), ("NN-DDA", "nndda/nndda.pt")):
        assert f"{what}: {tmp_path / 'models' / name} (sha256 " in caplog.text  # says which model it loaded
    assert f"no BSM given (--bsm): the shipped default, models/{default}" in caplog.text  # and that it was the default


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
                          os.devnull, "--set", "boards=2", "--set", f"matches=[{match}]")
    assert status == 2 and named in one_line_error(err) and "evaluate.matches" in err
    assert not (tmp_path / "eval").exists()


def verb_argv(verb: str, tmp_path: Path, shared: Path) -> list[str]:
    """`verb`'s required arguments, enough for it to get to its params and no further."""
    missing = str(tmp_path / "missing")
    return {
        "bsm": ["bsm", "--records", missing, "--out", str(tmp_path / "out")],
        "nndda": ["nndda", "--dd", missing, "--out", str(tmp_path / "out")],
        "dmc": ["dmc", "train", "--out", str(tmp_path / "out")],
        "bid": ["bid", "--hand", HAND, "--dealer", "N"],
        "evaluate": ["evaluate", "--dd", missing, "--out", str(tmp_path / "out")],
        "challenge": ["challenge", "--problems", str(shared / "data/challenges/lorserker_ben/Challenges/BW.pbn"),
                      "--agent", "rule", "--out", str(tmp_path / "out")],
        "generation": ["generation", "--generation", "1", "--agent", "new=bsm", "--dd", missing,
                       "--out", str(tmp_path / "out")],
        "selfplay": ["selfplay", "--bsm", missing, "--generation", "1", "--out", str(tmp_path / "out")],
    }[verb]


OWN_SECTION = {"bsm": ("bsm", "steps"), "nndda": ("nndda", "steps"), "dmc": ("dmc", "buffer")}  # an int key
OUT_OF_RANGE = {"bsm": ("steps=0", "bsm: steps, batch_size >= 1"), "nndda": ("steps=0", "nndda: steps, batch_size >= 1"),
                "dmc": ("actors=0", "dmc: actors, deals_per_batch")}


@pytest.mark.parametrize("verb", ["bsm", "nndda", "dmc", "bid", "evaluate", "challenge", "generation", "selfplay"])
@pytest.mark.parametrize("mistake", ["unknown", "type", "range", "no value", "not yaml", "params file"])
def test_every_verb_makes_a_bad_param_one_line(capsys, tmp_path, shared_dir, verb, mistake):
    """Unknown key, wrong type, out of range (search.samples=0), no `=`, a value YAML cannot read, a
    --params file that does not exist: each is one line, exit 2, naming the key or file."""
    section, int_key = OWN_SECTION.get(verb, ("search", "samples"))
    prefix = "" if verb in ("bsm", "nndda", "dmc", "bid") else f"{section}."
    out_of_range, range_named = OUT_OF_RANGE.get(verb, ("samples=0", "samples, oversample, topk >= 1"))
    options, named = {
        "unknown": (["--set", f"{prefix}foo=1"], f"unknown {section} params: ['foo']"),
        "type": (["--set", f"{prefix}{int_key}=abc"], f"{section}.{int_key} = 'abc': expected int"),
        "range": (["--set", f"{prefix}{out_of_range}"], range_named),
        "no value": (["--set", f"{prefix}{int_key}"], "--set wants key=value"),
        "not yaml": (["--set", f"{prefix}{int_key}=[1"], "the value is not readable YAML"),
        "params file": (["--params", str(tmp_path / "absent.yaml")], f"{tmp_path / 'absent.yaml'}: no such file"),
    }[mistake]
    status, err = run_cli(capsys, *verb_argv(verb, tmp_path, shared_dir), *options)
    assert status == 2, err
    line = one_line_error(err)
    assert line.startswith(f"bridgeflow {verb}: error: ") and named in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("verb", ["bsm", "bid", "evaluate", "challenge", "selfplay"])
def test_bf16_without_native_bfloat16_is_one_line(capsys, monkeypatch, tmp_path, shared_dir, verb):
    """precision=bf16 (bsm's, or search's) on a CPU that would emulate it: the params error, before any work."""
    for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        monkeypatch.setattr(torch.cpu, probe, lambda: False)
    key = "precision=bf16" if verb in ("bsm", "bid") else "search.precision=bf16"
    status, err = run_cli(capsys, *verb_argv(verb, tmp_path, shared_dir), "--set", key)
    assert status == 2, err
    assert "precision bf16 needs a CPU with native bfloat16" in one_line_error(err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("verb", ["evaluate", "selfplay"])
def test_a_bare_key_belongs_to_the_verbs_own_section_and_search_keys_are_named(capsys, tmp_path, shared_dir, verb):
    own = {"evaluate": "boards=0", "selfplay": "tempering=0"}[verb]
    status, err = run_cli(capsys, *verb_argv(verb, tmp_path, shared_dir), "--set", own)
    assert status == 2 and f"{verb} params (" in one_line_error(err)
    status, err = run_cli(capsys, *verb_argv(verb, tmp_path, shared_dir), "--set", "samples=2")
    assert status == 2 and f"unknown {verb} params: ['samples']" in one_line_error(err)


@pytest.mark.parametrize("content, named", [
    ("[1.5]", "item 0 is 1.5, not a deal_id"),
    ("[3, -1]", "item 1 is -1, not a deal_id"),
    ('["12"]', 'item 0 is "12", not a deal_id'),
    ("[true]", "item 0 is true, not a deal_id"),
    ("[18446744073709551616]", "not a deal_id"),
    ("[]", "lists no deal_id"),
    ('{"deal_ids": []}', "lists no deal_id"),
    ('{"boards": [1, 2]}', "want a JSON list of deal_ids"),
    ("42", "want a JSON list of deal_ids"),
    ("", "not JSON"),
    ("[1, 2", "not JSON"),
    (b"\xff\xfe[1]", "not JSON"),
])
def test_a_bad_board_list_is_one_line_naming_the_file(capsys, tmp_path, content, named):
    """`evaluate --boards FILE`: 1.5 is not read as deal 1, a wrong shape or not JSON is named."""
    dd = Path(__file__).resolve().parents[1] / "datasets" / "dd_labels"
    boards = tmp_path / "boards.json"
    boards.write_bytes(content if isinstance(content, bytes) else content.encode())
    status, err = run_cli(capsys, "evaluate", "--dd", str(dd), "--out", str(tmp_path / "eval"), "--params",
                          os.devnull, "--boards", str(boards))
    assert status == 2
    line = one_line_error(err)
    assert f"board list (--boards) {boards}: " in line and named in line
    assert not (tmp_path / "eval").exists()


GOOD_PBN = ('[Event "e"]\n[Board "1"]\n[Dealer "N"]\n[Vulnerable "None"]\n'
            '[Deal "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"]\n[Auction "N"]\nPass Pass Pass Pass\n')


@pytest.mark.parametrize("options, named", [
    (["--rows-per-shard", "0"], "--rows-per-shard: want an integer >= 1, not 0"),
    (["--rows-per-shard", "-5"], "--rows-per-shard: want an integer >= 1, not -5"),
    (["--rows-per-shard", "²"], "--rows-per-shard: want an integer >= 1, not '²'"),
    (["--split-bytes", "0"], "--split-bytes: want an integer >= 1, not 0"),
    (["--workers", "-1"], "--workers: want an integer >= 1, not -1"),
    (["--workers", "0"], "--workers: want an integer >= 1, not 0"),
    (["--rows-per-shards", "5"], "unrecognized arguments: --rows-per-shards 5"),  # a typo is not handed to Beam
    (["--rows", "5"], "unrecognized arguments: --rows 5"),  # no abbreviations either
    (["--out", ""], "--out '': give a folder"),
    (["--out", "FILE"], "exists and is not a folder"),
    (["--out", "FILE/sub"], "is a file, not a folder"),
])
def test_bad_ingest_options_are_one_line_errors_before_any_work(capsys, tmp_path, monkeypatch, options, named):
    monkeypatch.chdir(tmp_path)  # an empty --out must not write here
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.pbn").write_text(GOOD_PBN)
    (tmp_path / "FILE").write_text("not a folder")
    given = {"--out": "out", **dict(zip(options[::2], options[1::2]))}
    given["--out"] = str(tmp_path / given["--out"]) if given["--out"] else ""
    status, err = run_cli(capsys, "ingest", "--input", str(tmp_path / "in"), *sum(map(list, given.items()), []))
    assert status == 2
    assert named in one_line_error(err)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["FILE", "in"]


def test_a_beam_option_still_reaches_beam(tmp_path):
    from bridgeflow.pipelines import ingest

    (tmp_path / "a.pbn").write_text(GOOD_PBN)
    args, beam_args = ingest.parse_args(["--input", str(tmp_path), "--out", str(tmp_path / "out"),
                                         "--save_main_session", "--job_endpoint=localhost:8099"])
    assert beam_args == ["--save_main_session", "--job_endpoint=localhost:8099"]


@pytest.mark.parametrize("verb", ["ddlabel", "selfplay"])
def test_the_other_beam_verbs_refuse_unknown_options_and_bad_counts(capsys, tmp_path, verb):
    base = {"ddlabel": ["ddlabel", "--records", str(tmp_path), "--out", str(tmp_path / "dd")],
            "selfplay": ["selfplay", "--bsm", str(tmp_path), "--generation", "1", "--out", str(tmp_path / "sp")]}[verb]
    for options, named in ((["--workers", "-1"], "--workers: want an integer >= 1"),
                           (["--rows-per-shards", "5"], "unrecognized arguments: --rows-per-shards 5")):
        status, err = run_cli(capsys, *base, *options)
        assert status == 2 and named in one_line_error(err)


def test_a_second_ingest_into_the_same_out_is_one_line(capsys, tmp_path):
    from bridgeflow.pipelines.shards import lock_output

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.pbn").write_text(GOOD_PBN)
    out = tmp_path / "out"
    out.mkdir()
    with lock_output(out, "ingest"):  # another run holds it
        status, err = run_cli(capsys, "ingest", "--input", str(tmp_path / "in"), "--out", str(out), "--workers", "1")
    assert status == 2
    assert one_line_error(err) == (f"bridgeflow ingest: error: another ingest run is writing {out} (it holds "
                                   f"{out / '.lock'}): wait for it to end, or give another --out")


@pytest.mark.parametrize("out, named", [("", "--out '': give a file name"), ("FOLDER", "is a folder, not a file"),
                                        ("FILE/e.png", "FILE: exists and is not a folder")])
def test_explain_checks_its_out_before_the_work(capsys, tmp_path, models, out, named):
    (tmp_path / "FOLDER").mkdir()
    (tmp_path / "FILE").write_text("")
    target = str(tmp_path / out) if out else ""
    status, err = run_cli(capsys, "explain", "--hand", HAND, "--checkpoint", str(models), "--out", target)
    assert status == 2 and named in one_line_error(err)


def test_explain_makes_a_missing_out_folder_as_every_verb_does(capsys, tmp_path, models):
    status, err = run_cli(capsys, "explain", "--hand", HAND, "--checkpoint", str(models),
                          "--out", str(tmp_path / "new" / "folder" / "e.png"))
    assert status == 0, err
    assert (tmp_path / "new" / "folder" / "e.png").stat().st_size > 0


@pytest.mark.parametrize("verb", ["evaluate", "catalog"])
def test_an_out_that_is_a_file_or_folder_in_the_way_is_one_line(capsys, tmp_path, verb):
    (tmp_path / "FILE").write_text("")
    dd = Path(__file__).resolve().parents[1] / "datasets" / "dd_labels"
    argv = {"evaluate": ["evaluate", "--dd", str(dd), "--params", os.devnull, "--set", "boards=1",
                         "--out", str(tmp_path / "FILE")],
            "catalog": ["catalog", "--records", str(tmp_path), "--quarantine", str(tmp_path),
                        "--out", str(tmp_path / "FILE" / "bridge.duckdb")]}[verb]
    status, err = run_cli(capsys, *argv)
    assert status == 2 and str(tmp_path / "FILE") in one_line_error(err)


def test_an_out_in_a_place_this_user_may_not_write_is_one_line(capsys, tmp_path, monkeypatch):
    """(Tests run as root here, who may write anywhere: the permission answer is stood in for.)"""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.pbn").write_text(GOOD_PBN)
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != locked and real_access(path, mode))
    status, err = run_cli(capsys, "ingest", "--input", str(tmp_path / "in"), "--out", str(locked / "new" / "out"))
    assert status == 2
    assert one_line_error(err) == f"bridgeflow ingest: error: --out {locked / 'new' / 'out'}: {locked} is not writable"
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize("stop, status", [("ctrl-c", 130), ("sigterm", 143)])
def test_an_interrupted_verb_unwinds_and_says_so_in_one_line(monkeypatch, capsys, stop, status):
    """Ctrl-C and SIGTERM both unwind the verb (its `finally` blocks commit progress and end
    workers), then one line and 128 + the signal; the SIGTERM handler is put back after."""
    unwound = []

    def run(argv):
        try:
            if stop == "sigterm":
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(30)
            raise KeyboardInterrupt
        finally:
            unwound.append(argv)

    previous = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: SimpleNamespace(run=run))
    exit_status, err = run_cli(capsys, "evaluate", "--out", "x")
    assert exit_status == status
    assert unwound == [["--out", "x"]]
    assert one_line_error(err).startswith("bridgeflow evaluate: interrupted;")
    assert signal.getsignal(signal.SIGTERM) is previous
