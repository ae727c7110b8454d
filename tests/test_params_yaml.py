"""params.yaml agrees with the code: every key of a section is a parameter of the verb that reads
it, and its value is the code's default except where ON_PURPOSE says why it differs. Defaults live
in the code (the config dataclasses, the Beam jobs' options); params.yaml sizes the default
pipeline, which must run in minutes on 2 cores."""

from __future__ import annotations

from dataclasses import MISSING, fields
from pathlib import Path

import yaml

from bridgeflow.pipelines import ddlabel, ingest, synth
from bridgeflow.training.bidding.bsm_train import TrainConfig as BSMTrainConfig
from bridgeflow.training.dd.nndda_train import TrainConfig as NNDDATrainConfig
from bridgeflow.training.dmc.train import DMCConfig
from bridgeflow.training.evaluation.evaluate import EvalConfig
from bridgeflow.training.search.monte_carlo import SearchConfig
from bridgeflow.training.selfplay.actor import SelfPlayConfig

PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"
CONFIGS = {"bsm": BSMTrainConfig, "nndda": NNDDATrainConfig, "search": SearchConfig, "evaluate": EvalConfig,
           "selfplay": SelfPlayConfig, "dmc": DMCConfig}
SIZE = "the default pipeline's size (minutes on 2 cores); the code's default is a real run's"
ON_PURPOSE = {
    "synth": {"deals": "required on the command line; the default corpus is small",
              "seed": "the default corpus's own seed, which results/make_repro.json was made with",
              "boards_per_file": "two files of the small default corpus, so both cores write; by hand 10,000 a file"},
    "ingest": {"input": "required on the command line; the default pipeline reads what synth wrote"},
    "bsm": {"steps": SIZE, "checkpoint_every": SIZE, "eval_every": SIZE,
            "hand_features": "new models use them; the code's default False is what older model files without the field mean"},
    "nndda": {"steps": SIZE, "warmup": SIZE, "eval_every": SIZE, "ckpt_every": SIZE},
    "evaluate": {"boards": SIZE},
    "selfplay": {"search": "the search settings of self-play (DeepMind: particles by likelihood, sampled rollouts)"},
}


def code_defaults(section: str) -> dict:
    """The defaults of `section` as the code has them: a config dataclass's, or a Beam job's options."""
    if section in CONFIGS:
        return {f.name: f.default_factory() if f.default is MISSING else f.default for f in fields(CONFIGS[section])}
    if section == "synth":
        return vars(synth.parse_args(["--deals", "1", "--out", "o"])) | {"deals": None}
    job, required = {"ingest": (ingest, ["--input", "i", "--out", "o"]),
                     "ddlabel": (ddlabel, ["--records", "r", "--out", "o"])}[section]
    args, _ = job.parse_args(required)
    return vars(args) | {"input": None}


def test_params_yaml_holds_the_code_defaults_except_where_it_says_why():
    params = yaml.safe_load(PARAMS.read_text())
    unknown, differ = [], []
    for section, values in params.items():
        defaults = code_defaults(section)
        for key, value in values.items():
            if key not in defaults:
                unknown.append(f"{section}.{key}")
            elif value != defaults[key] and key not in ON_PURPOSE.get(section, {}):
                differ.append(f"{section}.{key}: params.yaml {value!r}, code {defaults[key]!r}")
    assert unknown == [] and differ == []
    stale = [f"{section}.{key}" for section, keys in ON_PURPOSE.items() for key in keys
             if key not in params.get(section, {}) or params[section][key] == code_defaults(section)[key]]
    assert stale == []  # a reason for a difference that is no longer there


def test_every_section_is_checked():
    assert set(yaml.safe_load(PARAMS.read_text())) == {*CONFIGS, "synth", "ingest", "ddlabel"}
