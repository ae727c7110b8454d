"""Train NN-DDA on the DD store (`bridgeflow nndda`).

Reads the DD stores --dd (each ddlabel's --out: labels/*.parquet, schema.DD_LABELS, or Parquet files
right in the folder), keeps only exact labels (solver == "dds": an estimate never trains the
estimator), splits deal-disjoint by deal_id and trains with a random one of the 96 exact DD
symmetries per example. Writes to --out:
  nndda.pt       the model (DDEstimator.load)
  ckpt.pt        resumable state, written every ckpt_every steps; a rerun with the same params and
                 data resumes from it, so a killed run loses at most ckpt_every steps
  metrics.json   test-split (and --oracle) accuracy, make/fail flips, per strain, per symmetry set
  plots/         curve.csv (valid accuracy by step), flips.csv (flip rate by level and strain)
  MODEL_CARD.md  data, split, params, metrics
Deterministic given params.seed (and the thread count)."""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import pyarrow as pa
import torch
import torch.nn.functional as F
from tqdm import tqdm

from bridgeflow.dataset.atomic import atomic_path
from bridgeflow.dataset.dd import SOLVER_NAME
from bridgeflow.dataset.digests import digest
from bridgeflow.dataset.encodings import STRAINS
from bridgeflow.dataset.errors import output_folder
from bridgeflow.dataset.labels import label_files, read_label_file
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.dataset.splits import split_of
from bridgeflow.training.model_files import FILE_OF
from bridgeflow.training.params import ParamsArguments, load_section

from . import symmetry
from .dd_estimator import DDEstimator
from .nndda_model import NNDDA, NNDDAConfig

log = logging.getLogger(__name__)

@dataclass
class TrainConfig(NNDDAConfig):
    """The `nndda:` section of params.yaml: the network's fields (NNDDAConfig) and its training."""

    seed: int = 0
    augment: bool = True  # a random exact DD symmetry per training example
    batch_size: int = 1024
    steps: int = 5000
    lr: float = 2e-3
    weight_decay: float = 0.01
    warmup: int = 500
    max_deals: int = 0  # use only the first N training deals (by deal_id); 0 = all. For learning curves
    ema: float = 0.0  # > 0: also average the weights over training (this decay per step) and keep the average if it scores better on valid
    eval_every: int = 1000
    ckpt_every: int = 1000
    threads: int = 2
    device: str = "cpu"  # where training runs ("cuda" on a GPU machine); the saved model loads on CPU
    eval_symmetries: list = field(default_factory=lambda: ["id", "rot"])  # "suits", "all" too for arch=mlp

    def __post_init__(self):
        super().__post_init__()
        if (min(self.steps, self.batch_size, self.eval_every, self.ckpt_every, self.threads) < 1 or self.warmup < 0
                or self.lr <= 0 or self.max_deals < 0 or not 0 <= self.ema < 1):
            raise ValueError("nndda: steps, batch_size >= 1 (eval_every, ckpt_every, threads too); warmup, max_deals >= 0; "
                             "lr > 0; 0 <= ema < 1")
        try:
            device = torch.device(self.device)
        except RuntimeError as error:
            raise ValueError(f"nndda.device: {self.device!r} is not a torch device ({error})") from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"nndda.device: {self.device!r}, but torch sees no CUDA device here")
        unknown = set(self.eval_symmetries) - set(symmetry.GROUPS)
        if unknown:
            raise ValueError(f"nndda.eval_symmetries: {sorted(unknown)} not among {sorted(symmetry.GROUPS)}")


# Params that do not change the trained weights: a checkpoint stays valid when only these change.
_NOT_TRAINING = ("eval_every", "ckpt_every", "threads", "device", "eval_symmetries")
LEVELS = range(1, 8)


def load_config(path: str | Path | None, overrides: list[str]) -> TrainConfig:
    """TrainConfig's defaults <- the params file's `nndda:` section <- `key=value` overrides."""
    return load_section(TrainConfig, path, "nndda", overrides)


def read_dd(*stores: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """DD stores -> (deal_ids uint64[n], owners int8[n, 52], tables int8[n, 4, 5], rows dropped
    as not exact), one row per deal_id, sorted by deal_id so file and store order do not matter."""
    files = [f for store in stores for f in label_files(store)]
    if not files:
        raise FileNotFoundError(f"no DD label files in {', '.join(map(str, stores))}")
    table = pa.concat_tables(read_label_file(f).select(["deal_id", "owner", "dd_tricks", "solver"]) for f in files)
    exact = table["solver"].to_numpy(zero_copy_only=False) == SOLVER_NAME
    ids = table["deal_id"].to_numpy()[exact]
    owners = table["owner"].combine_chunks().flatten().to_numpy().reshape(-1, 52)[exact]
    tables = table["dd_tricks"].combine_chunks().flatten().to_numpy().reshape(-1, 4, 5)[exact]
    ids, first = np.unique(ids, return_index=True)
    return ids, owners[first].astype(np.int8), tables[first].astype(np.int8), int((~exact).sum())


def split_data(ids: np.ndarray, max_deals: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Split name per row (deal_id % 100) and row indices per split; train is cut to its first
    max_deals rows when > 0 (rows are in deal_id order, a hash: a random, nested subset)."""
    names = np.array([split_of(int(i)) for i in ids])
    rows = {name: np.flatnonzero(names == name) for name in ("train", "valid", "test")}
    if max_deals > 0:
        rows["train"] = rows["train"][:max_deals]
    return names, rows


def dd_metrics(pred: np.ndarray, true: np.ndarray) -> dict:
    """Accuracy of predicted DD tables against exact ones (any shape [..., 4, 5]): exact cells,
    within one trick, mean abs error, bias, and make/fail flips: for each level 1..7 how often
    (pred >= 6 + level) differs from (true >= 6 + level), over all cells; by strain too."""

    def summary(p: np.ndarray, t: np.ndarray) -> dict:
        err = p - t
        flips = {str(level): float(((p >= 6 + level) != (t >= 6 + level)).mean()) for level in LEVELS}
        return {
            "exact": float((err == 0).mean()),
            "within1": float((np.abs(err) <= 1).mean()),
            "mae": float(np.abs(err).mean()),
            "bias": float(err.mean()),
            "flip_rate": float(np.mean(list(flips.values()))),
            "flips_by_level": flips,
        }

    pred = pred.reshape(-1, 4, 5).astype(np.int64)
    true = true.reshape(-1, 4, 5).astype(np.int64)
    out = {"deals": len(true), **summary(pred, true)}
    out["by_strain"] = {name: summary(pred[:, :, s], true[:, :, s]) for s, name in enumerate(STRAINS)}
    return out


def lr_at(step: int, config: TrainConfig) -> float:
    """Linear warmup, then cosine decay to a tenth."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * progress)))


def loss_fn(out: torch.Tensor, tables: torch.Tensor, head: str) -> torch.Tensor:
    """tables long[B, 20]."""
    if head == "ce":
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), tables.reshape(-1))
    return F.mse_loss(out, tables.float())


@torch.no_grad()
def valid_stats(model: NNDDA, owners: np.ndarray, tables: np.ndarray, head: str, chunk: int = 65536) -> dict:
    model.eval()
    device = next(model.parameters()).device
    loss, preds = 0.0, []
    for start in range(0, len(owners), chunk):
        out = model(torch.from_numpy(owners[start : start + chunk]).to(device))
        y = torch.from_numpy(tables[start : start + chunk].reshape(-1, 20)).to(device).long()
        loss += loss_fn(out, y, head).item() * len(y)
        preds.append(out.argmax(-1) if head == "ce" else out.round().clamp(0, 13))
    model.train()
    err = torch.cat(preds).cpu().numpy().reshape(-1, 4, 5) - tables
    return {"valid_loss": loss / len(owners), "valid_exact": float((err == 0).mean()),
            "valid_within1": float((np.abs(err) <= 1).mean())}


def save_atomic(obj: dict, path: Path) -> None:
    with atomic_path(path) as temporary:
        torch.save(obj, temporary)


def checkpoint(path: Path, state: dict) -> None:
    """Resumable state (a separate function so tests can interrupt a run right after one)."""
    save_atomic(state, path)


def keep_better_weights(model: NNDDA, average: list[torch.Tensor], valid: tuple[np.ndarray, np.ndarray], head: str) -> dict:
    """Load the averaged weights into the model if they score more exact cells on the valid split
    than the last step's; say what each scored and which the model now holds."""
    params = list(model.parameters())
    last_weights = [p.detach().clone() for p in params]
    last = valid_stats(model, *valid, head)
    with torch.no_grad():
        torch._foreach_copy_(params, average)
    averaged = valid_stats(model, *valid, head)
    kept = "averaged" if averaged["valid_exact"] >= last["valid_exact"] else "last"
    if kept == "last":
        with torch.no_grad():
            torch._foreach_copy_(params, last_weights)
    return {"last": last, "averaged": averaged, "kept": kept}


def train(config: TrainConfig, owners: np.ndarray, tables: np.ndarray, valid: tuple[np.ndarray, np.ndarray], out: Path,
          fingerprint: str) -> tuple[NNDDA, list[dict], float, dict | None]:
    """The training loop. Returns the model, the validation curve, the seconds spent training and,
    with config.ema, what the last and the averaged weights scored on valid (keep_better_weights)."""
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    model_config = NNDDAConfig(**{f.name: getattr(config, f.name) for f in fields(NNDDAConfig)})
    device = torch.device(config.device)
    model = NNDDA(model_config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    params = list(model.parameters())
    average = [p.detach().clone() for p in params] if config.ema else None
    step, curve, seconds = 0, [], 0.0
    run_key = {k: v for k, v in asdict(config).items() if k not in _NOT_TRAINING} | {"data": fingerprint}
    ckpt_path = out / "ckpt.pt"
    if ckpt_path.exists():
        state = torch.load(ckpt_path, map_location=device, weights_only=True)
        if state["run_key"] == run_key:
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            rng.bit_generator.state = state["rng"]
            step, curve, seconds = state["step"], state["curve"], state["seconds"]
            if average is not None:
                average = [tensor.to(device) for tensor in state["average"]]
            log.info("resuming from %s at step %d", ckpt_path, step)
        else:
            log.warning("%s is from other params or data: starting afresh", ckpt_path)

    batch = config.batch_size
    loss_sum, loss_steps = torch.zeros((), device=device), 0  # summed on the device: no sync per step
    model.train()
    bar = tqdm(total=config.steps * batch, initial=step * batch, unit="sample", unit_scale=True, smoothing=0.1)
    started = time.perf_counter() - seconds
    while step < config.steps:
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, config)
        rows = rng.integers(0, len(owners), batch)
        x, y = owners[rows], tables[rows].reshape(-1, 20)
        if config.augment:
            g = rng.integers(0, symmetry.NUM, batch)
            x, y = symmetry.transform_owners(x, g), symmetry.transform_cells(y, g)
        x, y = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device).long()
        loss = loss_fn(model(x), y, config.head)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if average is not None:
            with torch.no_grad():
                torch._foreach_lerp_(average, params, 1 - config.ema)
        step += 1
        loss_sum += loss.detach()
        loss_steps += 1
        bar.update(batch)
        if step % config.eval_every == 0 or step == config.steps:
            stats = {"step": step, "lr": lr_at(step - 1, config), "train_loss": loss_sum.item() / max(1, loss_steps)}
            stats |= valid_stats(model, *valid, config.head)
            curve.append(stats)
            loss_sum, loss_steps = torch.zeros((), device=device), 0
            bar.set_postfix(loss=f"{stats['train_loss']:.3f}", valid_exact=f"{stats['valid_exact']:.3f}")
        if step % config.ckpt_every == 0 or step == config.steps:
            checkpoint(ckpt_path, {
                "run_key": run_key, "step": step, "curve": curve, "seconds": time.perf_counter() - started,
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "rng": rng.bit_generator.state,
                "model_config": vars(model_config), "average": average,
            })
    bar.close()
    seconds = time.perf_counter() - started
    weights = None if average is None else keep_better_weights(model, average, valid, config.head)
    return model.cpu().eval(), curve, seconds, weights


def evaluate(estimator: DDEstimator, owners: np.ndarray, tables: np.ndarray, symmetries: list[str]) -> dict:
    """dd_metrics per symmetry-averaging set (speed is benchmarks/bench_nndda.py's business)."""
    return {name: dd_metrics(estimator.tables(owners, symmetries=name), tables) for name in symmetries}


def model_card(config: TrainConfig, data: dict, metrics: dict, num_params: int) -> str:
    lines = [
        "# NN-DDA model card", "", f"schema_version: {SCHEMA_VERSION}", "",
        "Estimates the double-dummy table [declarer N,E,S,W][strain C,D,H,S,NT] of a full deal.",
        "Load with `bridgeflow.training.dd.dd_estimator.DDEstimator.load`; rows it labels must say `solver=\"nn-dda\"`.",
        "", "## Data", "",
        f"- DD stores: {', '.join(f'`{store}`' for store in data['dd'])}; exact rows (solver '{SOLVER_NAME}') only, {data['dropped_not_exact']} other rows dropped",
        f"- deals: {data['deals']} distinct; deal-disjoint split by deal_id % 100: "
        f"train {data['train']} (used: {data['train_used']}), valid {data['valid']}, test {data['test']}",
        f"- oracle evaluation deals (not in the train split): {data.get('oracle', 0)}",
        "", "## Params", "", f"- {num_params:,} parameters",
    ]
    lines += [f"- {k}: {v}" for k, v in asdict(config).items()]
    trained = metrics.get("train")
    if trained:
        lines += [f"- trained: {trained['steps']:,} steps in {trained['seconds'] / 60:.0f} min "
                  f"({trained['samples_per_s']:,.0f} examples/s, {config.threads} threads on {config.device})"]
    weights = (trained or {}).get("weights")
    if weights:
        lines += [f"- weights kept: {weights['kept']} (valid exact: the last step's {weights['last']['valid_exact']:.4f}, "
                  f"the average's {weights['averaged']['valid_exact']:.4f})"]
    lines += ["", "## Metrics", "", "| set | symmetries | deals | exact | within 1 | MAE | flip rate | NT exact |",
              "|---|---|---|---|---|---|---|---|"]
    for set_name in ("test", "oracle"):
        for sym, m in metrics.get(set_name, {}).items():
            lines.append(f"| {set_name} | {sym} | {m['deals']} | {m['exact']:.4f} | {m['within1']:.4f} | {m['mae']:.3f} "
                         f"| {m['flip_rate']:.4f} | {m['by_strain']['NT']['exact']:.4f} |")
    lines += ["", "Symmetries: predictions averaged over that subgroup of the 96 exact DD symmetries (id = one",
              "pass; rot = 4 seat rotations; suits = 24 suit permutations; all = 96).",
              "Flip rate: for each level 1..7, how often the estimate changes whether a contract at that level",
              "makes (tricks >= 6 + level), averaged over levels and all 20 cells. Full breakdown: metrics.json.", ""]
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, ParamsArguments]:
    parser = argparse.ArgumentParser(prog="bridgeflow nndda", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dd", required=True, action="append",
                        help="a DD store (ddlabel's --out, or a folder of DD_LABELS Parquet); repeat to train on several")
    parser.add_argument("--out", required=True, help="output folder (model, checkpoint, metrics, plots)")
    params = ParamsArguments(parser, ["nndda"], bare="nndda")
    parser.add_argument("--oracle", help="also evaluate on the real deals of DDS's lists in this oracle folder (shared/data/oracle)")
    return parser.parse_args(argv), params


def run(argv: list[str] | None = None) -> dict:
    args, params_arguments = parse_args(argv)
    config = params_arguments.parsed(args).load(TrainConfig, "nndda")
    torch.set_num_threads(config.threads)
    out = output_folder(args.out)
    (out / "plots").mkdir(parents=True, exist_ok=True)

    ids, owners, tables, dropped = read_dd(*args.dd)
    names, rows = split_data(ids, config.max_deals)
    if len(rows["train"]) == 0 or len(rows["valid"]) == 0:
        raise ValueError(f"{', '.join(args.dd)}: need exact DD labels in both the train and valid splits")
    data = {"dd": args.dd, "deals": len(ids), "dropped_not_exact": dropped, "train_used": len(rows["train"])}
    data |= {name: int((names == name).sum()) for name in ("train", "valid", "test")}
    fingerprint = digest(ids[rows["train"]].tobytes() + tables[rows["train"]].tobytes())

    model, curve, seconds, weights = train(config, owners[rows["train"]], tables[rows["train"]],
                                  (owners[rows["valid"]], tables[rows["valid"]]), out, fingerprint)
    save_atomic({"model_config": vars(model.config), "model": model.state_dict(), "params": asdict(config), "data": data},
                out / FILE_OF["NN-DDA"])
    estimator = DDEstimator.load(out / FILE_OF["NN-DDA"])

    metrics = {"schema_version": SCHEMA_VERSION, "data": data, "num_params": model.num_params(),
               "train": {"steps": config.steps, "seconds": seconds, "samples_per_s": config.steps * config.batch_size / seconds}}
    if weights:
        metrics["train"]["weights"] = weights
    if len(rows["test"]):
        metrics["test"] = evaluate(estimator, owners[rows["test"]], tables[rows["test"]], config.eval_symmetries)
    if args.oracle:
        from .dd_oracle import load_oracle

        oracle_ids, oracle_owners, oracle_tables = load_oracle(Path(args.oracle), "dds")
        unseen = ~np.isin(oracle_ids, ids[names == "train"])
        data["oracle"] = int(unseen.sum())
        metrics["oracle"] = evaluate(estimator, oracle_owners[unseen], oracle_tables[unseen], config.eval_symmetries)

    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    header = ["step", "lr", "train_loss", "valid_loss", "valid_exact", "valid_within1"]
    (out / "plots" / "curve.csv").write_text(
        ",".join(header) + "\n" + "".join(",".join(f"{row[k]:.6g}" for k in header) + "\n" for row in curve))
    flips = ["set,strain,level,flip_rate"]
    for set_name in ("test", "oracle"):
        if set_name in metrics:
            m = metrics[set_name][config.eval_symmetries[0]]
            for strain, sm in [("all", m)] + list(m["by_strain"].items()):
                flips += [f"{set_name},{strain},{level},{rate:.6g}" for level, rate in sm["flips_by_level"].items()]
    (out / "plots" / "flips.csv").write_text("\n".join(flips) + "\n")
    (out / "MODEL_CARD.md").write_text(model_card(config, data, metrics, model.num_params()))
    log.info("NN-DDA: %s", json.dumps({k: metrics[k][config.eval_symmetries[0]]["exact"] for k in ("test", "oracle") if k in metrics}))
    return metrics
