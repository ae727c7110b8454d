"""What the repository ships: trained models in models/, frozen exact DD labels in datasets/, and
the evaluation board lists, each checkable against itself and small enough for git."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import torch

from bridgeflow.dataset.labels import FROZEN_COMPACT_SCHEMA, FROZEN_NAME, FROZEN_SCHEMA, read_label_file, read_labels
from bridgeflow.dataset.splits import split_of
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.model_files import FILE_OF, MODELS, SHIPPED, ship

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO / "datasets"
BOARD_LISTS = REPO / "benchmarks" / "boards"
CAP_BYTES = 30 * 2**20  # models/ and datasets/ together


def files_below(*folders: Path) -> list[Path]:
    return [path for folder in folders if folder.is_dir() for path in folder.rglob("*") if path.is_file()]


def test_shipped_files_stay_under_the_cap():
    assert sum(path.stat().st_size for path in files_below(MODELS, DATASETS)) <= CAP_BYTES


def test_every_shipped_model_loads_safely_and_matches_its_card():
    weight_files = {FILE_OF[what] for what in SHIPPED}
    paths = [path for path in files_below(MODELS) if path.name in weight_files]
    assert {path.parent.name for path in paths} >= set(SHIPPED.values())
    for path in paths:  # the default models and any other shipped beside them (e.g. models/bsm_ben)
        state = torch.load(path, weights_only=True)
        assert set(state) == {"model", "model_config"}, path
        assert json.loads((path.parent / "config.json").read_text()) == state["model_config"]
        card = (path.parent / "MODEL_CARD.md").read_text()
        assert f"sha256: `{hashlib.sha256(path.read_bytes()).hexdigest()}`" in card, path
        assert "trained by: `" in card and (path.parent / "metrics.json").is_file()


def test_frozen_labels_are_named_by_their_hash_and_hold_each_deal_once():
    files = sorted((DATASETS / "dd_labels").glob("*.parquet"))
    ids = []
    for path in files:
        assert path.name == FROZEN_NAME.format(hashlib.sha256(path.read_bytes()).hexdigest()[:12])
        table = pq.read_table(path)
        assert any(table.schema.equals(schema) for schema in (FROZEN_SCHEMA, FROZEN_COMPACT_SCHEMA)), path
        assert set(table.column("solver").to_pylist()) == {"dds"}
        ids += read_label_file(path).column("deal_id").to_pylist()
    assert len(ids) == len(set(ids))


def test_board_lists_name_their_hash_and_are_labelled():
    lists = sorted(BOARD_LISTS.glob("*.json"))
    assert {re.sub(r"-[0-9a-f]{16}\.json$", "", path.name) for path in lists} >= {"valid1000", "test1000"}
    labelled = set(read_labels(DATASETS / "dd_labels").column("deal_id").to_pylist())
    for path in lists:
        listed = json.loads(path.read_text())
        ids = np.array(listed["deal_ids"], np.uint64)
        assert listed["hash"] == hashlib.blake2b(ids.astype("<u8").tobytes(), digest_size=8).hexdigest()
        assert path.name.endswith(f"-{listed['hash']}.json")
        split = path.name.split("1000")[0]
        assert {split_of(int(deal)) for deal in ids} == {split}, path
        assert set(map(int, ids)) <= labelled, f"{path.name}: deals without a committed exact label"


def test_ship_keeps_weights_and_config_and_writes_a_card(tmp_path):
    trained = tmp_path / "trained"
    trained.mkdir()
    bsm = BSM(BSMConfig(hidden=16, layers=1, embed=8))
    torch.save({"model_config": asdict(bsm.config), "model": bsm.state_dict(), "data": {"files": ["a"]}},
               trained / "model.pt")
    (trained / "metrics.json").write_text(json.dumps({"call_accuracy": 0.5}))
    (trained / "MODEL_CARD.md").write_text("# BSM model card\n")
    path = ship(trained, "BSM", tmp_path / "models" / "bsm", "bridgeflow bsm --records r --out trained")
    assert set(torch.load(path, weights_only=True)) == {"model", "model_config"}
    card = (path.parent / "MODEL_CARD.md").read_text()
    assert f"sha256: `{hashlib.sha256(path.read_bytes()).hexdigest()}`" in card
    assert "trained by: `bridgeflow bsm --records r --out trained`" in card
    assert Bidder.load(path.parent).model.config == bsm.config
