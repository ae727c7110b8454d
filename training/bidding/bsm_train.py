"""Train the bidding system model: `bridgeflow bsm --records DIR --out DIR [--params params.yaml]
[--set key=value ...]`.

One explicit loop. A batch is a pure function of (seed, step) and the checkpoint holds the model,
the optimiser, the RNG and the log, so a run killed at any step and restarted with the same
params resumes from its last checkpoint and ends with the same weights as an uninterrupted run.
The out folder receives model.pt (for `Bidder.load`), ckpt.pt (to resume), metrics.json
(held-out test split), plots/*.csv and MODEL_CARD.md.

Policy iteration: `--selfplay DIR --init PREVIOUS` trains on a selfplay stage's decisions with
soft call targets (cross-entropy to pi'), mixed with `--imitation-fraction` of the --records
auctions (bsm_data.selfplay_corpus); the belief heads learn from the generated deals' true hands."""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch
import yaml
from tqdm import tqdm

from bridgeflow.dataset.atomic import atomic_path
from bridgeflow.dataset.digests import file_digest
from bridgeflow.dataset.encodings import CARD_HCP
from bridgeflow.dataset.errors import InputError, existing
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.training.model_files import FILE_OF, model_file
from bridgeflow.training.params import ParamsArguments, load_section

from .bsm_data import SPLITS, Corpus, batch_rows, load_corpus, selfplay_corpus
from .bsm_model import BSM, BSMConfig, arithmetic, check_precision, losses

TENSOR_KEYS = ("tokens", "turn", "static", "decision", "legal", "mine", "x480", "call", "holder", "partner_hcp", "lengths",
               "target", "trained")
HEADS = ("call", "hcp", "lengths", "cards")
# keys that do not change the trained weights: a checkpoint made under other values still resumes
RESUME_FREE = {"checkpoint_every", "eval_every", "eval_sequences", "device", "threads"}
ECE_BINS = 15


@dataclass
class TrainConfig(BSMConfig):
    """The `bsm:` section of params.yaml: the model's fields (BSMConfig), then the data's and the loop's."""

    sources: str | list = "all"  # "all", or a list of the records' source_format values, e.g. [openspiel] or [lin, pbn]
    bidders: str | list = "all"  # "all", or the bidders at all four seats (synth's --bidder), e.g. [ben-nosearch] or [rule, ben-nosearch]
    lr: float = 3e-3  # BSM paper: 1e-3; 3e-3 learnt faster here (see the report)
    min_lr: float = 1e-4  # cosine decay from lr to min_lr over `steps`, after `warmup`
    warmup: int = 100
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    batch_size: int = 128  # seat sequences per step (each carries ~1/4 of an auction's calls)
    steps: int = 2000
    w_call: float = 1.0
    w_hcp: float = 0.5
    w_lengths: float = 0.5
    w_cards: float = 0.5
    # Policy iteration: KL(--init || this network) over the calls at every decision point, weighted.
    # It holds the previous generation's sureness where the search's targets do not move it.
    w_anchor: float = 0.0
    seed: int = 0
    checkpoint_every: int = 500
    eval_every: int = 500
    eval_sequences: int = 8192  # valid-split sequences scored at each eval_every
    device: str = "cpu"
    threads: int = 0  # torch CPU threads; 0 = torch's default (all cores). 1 is far faster on a busy machine
    precision: str = "fp32"  # fp32 | bf16: training's forward passes under bfloat16 autocast (weights, losses and evaluation fp32)

    def __post_init__(self):
        if self.steps < 1 or self.batch_size < 1 or self.warmup < 0 or self.lr <= 0 or self.w_anchor < 0:
            raise ValueError("bsm: steps, batch_size >= 1, warmup >= 0, lr > 0 and w_anchor >= 0")
        check_precision(self.precision, self.device)

    def model(self) -> BSMConfig:
        """The model's fields only: what model.pt records and Bidder.load rebuilds."""
        return BSMConfig(**{f.name: getattr(self, f.name) for f in fields(BSMConfig)})

    def weights_key(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in RESUME_FREE}


def load_config(params: Path | None, overrides: list[str]) -> TrainConfig:
    """Defaults, then the `bsm:` section of `params` (if the file has one), then `key=value` overrides."""
    cfg = load_section(TrainConfig, params, "bsm", overrides, any_type=("sources", "bidders"))
    for name in ("sources", "bidders"):
        if getattr(cfg, name) != "all" and not isinstance(getattr(cfg, name), list):
            cfg = replace(cfg, **{name: [getattr(cfg, name)]})
    return cfg


def to_tensors(batch: dict[str, np.ndarray], device: str) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v).to(device) for k, v in batch.items() if k in TENSOR_KEYS}


def get_lr(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)


def weighted_loss(parts: dict[str, torch.Tensor], cfg: TrainConfig) -> torch.Tensor:
    return sum(getattr(cfg, f"w_{name}") * value for name, value in parts.items())


def anchor_kl(call_logits: torch.Tensor, anchor_logits: torch.Tensor) -> torch.Tensor:
    """Mean KL(anchor || model) of the call distributions over the decision points (illegal calls,
    -inf logits in both, count 0)."""
    anchor = anchor_logits.log_softmax(-1)
    per_call = anchor.exp() * (anchor - call_logits.log_softmax(-1))
    return torch.where(anchor > -math.inf, per_call, 0.0).sum(-1).mean()


@torch.no_grad()
def evaluate(model: BSM, corpus: Corpus, ids: np.ndarray, device: str, batch_size: int = 1024) -> dict:
    """Every decision point of the sequences `ids`: call accuracy (all, bids only, top-3, by
    auction position), NLL and ECE of the call head; partner-HCP and suit-length MAE of the
    belief means; card-holder log-loss and Brier over unseen cards; each next to the prior-only
    baseline (unseen cards uniform over the other three players)."""
    was_training = model.training
    model.eval()
    total = defaultdict(float)
    by_position = defaultdict(lambda: [0, 0])
    ece = np.zeros((ECE_BINS, 3))  # confidence sum, correct sum, count
    features480 = model.config.arch == "mlp"
    card_hcp = torch.as_tensor(CARD_HCP, dtype=torch.float32, device=device)
    for first in range(0, len(ids), batch_size):
        raw = corpus.batch(ids[first:first + batch_size], features480)
        b = to_tensors(raw, device)
        out = model(b)
        parts = losses(out, b)
        n = len(b["call"])
        total["n"] += n
        for name, value in parts.items():
            total[f"loss_{name}"] += float(value) * n
        probs = out["call"].softmax(-1)
        target = b["call"]
        top3 = probs.topk(3, dim=-1).indices
        correct = top3[:, 0] == target
        total["correct"] += float(correct.sum())
        total["top3"] += float((top3 == target[:, None]).any(-1).sum())
        bid = target >= 3
        total["bids"] += float(bid.sum())
        total["bid_correct"] += float((correct & bid).sum())
        total["nll"] += float(-probs.gather(1, target[:, None]).log().sum())
        confidence = probs.max(-1).values.cpu().numpy()
        which = np.minimum((confidence * ECE_BINS).astype(int), ECE_BINS - 1)
        np.add.at(ece, which, np.stack([confidence, correct.cpu().numpy(), np.ones(n)], axis=1))
        for position, ok in zip(raw["position"], correct.cpu().numpy()):
            by_position[int(position)][0] += 1
            by_position[int(position)][1] += int(ok)
        mine = b["mine"].float()
        hcp_mean = (out["hcp"].softmax(-1) * torch.arange(out["hcp"].shape[-1], device=device)).sum(-1)
        total["hcp_err"] += float((hcp_mean - b["partner_hcp"]).abs().sum())
        total["hcp_err_prior"] += float(((40 - mine @ card_hcp) / 3 - b["partner_hcp"]).abs().sum())
        length_mean = (out["lengths"].softmax(-1) * torch.arange(out["lengths"].shape[-1], device=device)).sum(-1)
        my_length = mine.view(n, 4, 13).sum(-1)
        total["len_err"] += float((length_mean - b["lengths"]).abs().sum())
        total["len_err_prior"] += float(((13 - my_length[:, None, :]) / 3 - b["lengths"]).abs().sum())
        total["len_n"] += b["lengths"].numel()
        unseen = ~b["mine"]
        p = out["cards"].softmax(-1)[unseen][:, 1:]
        y = torch.nn.functional.one_hot(b["holder"][unseen] - 1, 3).float()
        total["cards_n"] += len(p)
        total["card_logloss"] += float(-(p * y).sum(-1).log().sum())
        total["card_brier"] += float(((p - y) ** 2).sum())
        total["card_brier_prior"] += float(((1 / 3 - y) ** 2).sum())
    model.train(was_training)
    n = max(total["n"], 1)
    metrics = {
        "decision_points": int(total["n"]),
        "call_accuracy": total["correct"] / n,
        "bid_accuracy": total["bid_correct"] / max(total["bids"], 1),
        "top3_accuracy": total["top3"] / n,
        "call_nll": total["nll"] / n,
        "call_ece": float(np.abs(ece[:, 0] - ece[:, 1]).sum() / n),
        "partner_hcp_mae": total["hcp_err"] / n,
        "partner_hcp_mae_prior": total["hcp_err_prior"] / n,
        "suit_length_mae": total["len_err"] / max(total["len_n"], 1),
        "suit_length_mae_prior": total["len_err_prior"] / max(total["len_n"], 1),
        "card_logloss": total["card_logloss"] / max(total["cards_n"], 1),
        "card_logloss_prior": math.log(3),
        "card_brier": total["card_brier"] / max(total["cards_n"], 1),
        "card_brier_prior": total["card_brier_prior"] / max(total["cards_n"], 1),
        **{f"loss_{name}": total[f"loss_{name}"] / n for name in HEADS},
    }
    positions = [{"position": k, "decision_points": c, "accuracy": ok / c} for k, (c, ok) in sorted(by_position.items())]
    calibration = [
        {"bin": i, "confidence": ece[i, 0] / ece[i, 2], "accuracy": ece[i, 1] / ece[i, 2], "decision_points": int(ece[i, 2])}
        for i in range(ECE_BINS) if ece[i, 2] > 0
    ]
    return {"metrics": metrics, "by_position": positions, "calibration": calibration}


def _save(obj: dict, path: Path) -> None:
    """Write atomically, so a kill never leaves half a checkpoint."""
    with atomic_path(path) as temporary:
        torch.save(obj, temporary)


def load_init(path: str | Path) -> tuple[dict, str]:
    """The weights of a finished BSM (model.pt, or its training folder) to warm-start from, and a
    hash of the file (a checkpoint only resumes from the same start)."""
    path = model_file(path, "BSM", "--init")
    return torch.load(path, weights_only=True)["model"], file_digest(path)


def train(cfg: TrainConfig, corpus: Corpus, out: Path, stop_at: int | None = None, fresh: bool = False,
          progress: bool = True, init: str | Path | None = None) -> dict:
    """Run (or resume) the loop up to `cfg.steps`; `stop_at` ends it early without saving, as a
    kill would. `init` warm-starts from a trained model's weights (a new optimizer and schedule:
    a longer run continued at a lower lr). Returns the model, the log rows and the throughput."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(cfg.seed)
    model = BSM(cfg.model()).to(cfg.device)
    init_hash, anchor = None, None
    if cfg.w_anchor and init is None:
        raise InputError("bsm.w_anchor > 0 needs --init: the network to stay near")
    if init is not None:
        weights, init_hash = load_init(init)
        try:
            model.load_state_dict(weights)
        except RuntimeError as error:
            raise ValueError(f"--init {init}: its weights do not fit the bsm params ({error})") from None
        if cfg.w_anchor:
            anchor = BSM(cfg.model()).to(cfg.device)
            anchor.load_state_dict(weights)
            anchor.eval().requires_grad_(False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    train_ids = corpus.sequences("train", cfg.sources, cfg.bidders)
    valid_ids = corpus.sequences("valid", cfg.sources, cfg.bidders)[:cfg.eval_sequences]
    if len(train_ids) == 0:
        raise InputError(f"no training auctions in {corpus.folder} for sources={cfg.sources!r}, bidders={cfg.bidders!r} "
                         f"(the records hold sources {corpus.meta['sources']}, bidders {corpus.meta['bidders']})")
    step, log, running = 0, [], defaultdict(float)  # running: train losses summed since the last log row
    checkpoint_path = out / "ckpt.pt"
    if checkpoint_path.exists() and not fresh:
        checkpoint = torch.load(checkpoint_path, weights_only=True)
        if (checkpoint["weights_key"] == cfg.weights_key() and checkpoint["data"] == corpus.folder.name
                and checkpoint.get("init") == init_hash):
            model.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            torch.set_rng_state(checkpoint["rng"])
            step, log, running = checkpoint["step"], checkpoint["log"], defaultdict(float, checkpoint["running"])
            print(f"bsm: resuming from {checkpoint_path} at step {step}")
        else:
            print(f"bsm: {checkpoint_path} was made with other params or data: starting afresh")
    features480 = cfg.arch == "mlp"
    model.train()
    samples, busy = 0, 0.0
    bar = tqdm(total=cfg.steps, initial=step, unit="step", desc=f"bsm {cfg.arch}", disable=not progress, mininterval=1.0)
    last = stop_at if stop_at is not None else cfg.steps
    while step < min(last, cfg.steps):
        started = time.perf_counter()
        ids = train_ids[batch_rows(len(train_ids), cfg.batch_size, cfg.seed, step)]
        batch = to_tensors(corpus.batch(ids, features480), cfg.device)
        for group in optimizer.param_groups:
            group["lr"] = get_lr(step, cfg)
        with arithmetic(cfg.precision, cfg.device):
            out = model(batch)
            if anchor is not None:
                with torch.no_grad():
                    anchor_logits = anchor(batch)["call"]
        out = {name: value.float() for name, value in out.items()}
        parts = losses(out, batch)
        if anchor is not None:
            parts["anchor"] = anchor_kl(out["call"], anchor_logits.float())
        loss = weighted_loss(parts, cfg)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        step += 1
        busy += time.perf_counter() - started
        samples += len(batch["call"])
        running["steps"] += 1
        for name, value in parts.items():
            running[name] += value.item()
        running["loss"] += loss.item()
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", samples_per_s=f"{samples / busy:.0f}", refresh=False)
        if step % cfg.eval_every == 0 or step == cfg.steps:
            row = {"step": step, "lr": get_lr(step - 1, cfg)}
            row.update({f"train_{k}": running[k] / running["steps"] for k in ("loss",) + HEADS + ("anchor",) if k in running})
            if len(valid_ids):
                valid = evaluate(model, corpus, valid_ids, cfg.device)["metrics"]
                shown = ("call_accuracy", "top3_accuracy", "partner_hcp_mae", "suit_length_mae", "card_logloss")
                row.update({f"valid_{k}": valid[k] for k in shown})
            log.append(row)
            running.clear()
            bar.write(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            _save({
                "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "rng": torch.get_rng_state(), "log": log, "running": dict(running), "weights_key": cfg.weights_key(),
                "model_config": asdict(cfg.model()), "data": corpus.folder.name, "init": init_hash,
            }, checkpoint_path)
    bar.close()
    return {"model": model, "step": step, "log": log, "samples_per_s": samples / busy if busy else None,
            "init": None if init is None else f"{init} ({init_hash})"}


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def evaluate_by_bidder(model: BSM, corpus: Corpus, cfg: TrainConfig, test_ids: np.ndarray) -> dict[str, dict]:
    """`evaluate` on each bidder's own test auctions, when the test split holds more than one
    (a model trained on the mix, scored against BEN's calls alone)."""
    parts = {name: corpus.sequences(SPLITS[2], cfg.sources, [name]) for name in corpus.meta["bidders"]
             if cfg.bidders == "all" or name in cfg.bidders}
    parts = {name: ids for name, ids in parts.items() if len(ids)}
    if len(parts) < 2 and sum(map(len, parts.values())) == len(test_ids):
        return {}
    return {name: evaluate(model, corpus, ids, cfg.device) for name, ids in parts.items()}


def model_card(cfg: TrainConfig, corpus: Corpus, result: dict, report: dict, records: Path,
               by_bidder: dict[str, dict] | None = None) -> str:
    m = report["metrics"]
    meta = corpus.meta
    lines = [
        "# BSM model card",
        "",
        f"schema_version: {SCHEMA_VERSION}",
        "",
        "Bidding system model: next call under the legality mask, plus hand understanding (partner's HCP,",
        "each other player's suit lengths, who holds each unseen card), trained by imitation on complete auctions.",
        "",
        "## Data",
        f"- records: `{records}` ({len(meta['files'])} Parquet files; cache `{corpus.folder}`)",
        f"- sources: {cfg.sources} (available: {', '.join(meta['sources']) or 'none'})",
        f"- bidders: {cfg.bidders} (available: {', '.join(meta['bidders']) or 'none'})",
        f"- auctions: {meta['auctions']} usable (complete auction and deal); {meta['rejected_illegal']} dropped as illegal or unfinished",
        f"- decision points (every call of every auction, seen by its caller): {meta['decision_points']}",
        "- split: deal-disjoint, `deal_id % 100` < 80 train, < 90 valid, else test (the same deal in two rooms stays in one split)",
        f"- auctions by split: {meta['auctions_by_split']}",
        *([f"- policy iteration: {meta['generated_auctions']} self-play auctions (soft targets: the search's improved policy), "
           f"{meta['imitation_train_auctions']} imitation training auctions (imitation_fraction {meta['imitation_fraction']})"]
          if "generated_auctions" in meta else []),
        "",
        "## Params",
        "```yaml",
        yaml.safe_dump({"bsm": cfg.weights_key()}, sort_keys=False).rstrip(),
        "```",
        f"Trained {result['step']} steps; {result['samples_per_s'] or 0:.0f} decision points/s in this process.",
        *([f"Warm-started from `{result['init']}`."] if result.get("init") else []),
        "",
        f"## Metrics (test split, {m['decision_points']} decision points)",
        "| metric | model | prior-only baseline |",
        "|---|---|---|",
        f"| call accuracy | {m['call_accuracy']:.4f} | |",
        f"| call accuracy, bids only | {m['bid_accuracy']:.4f} | |",
        f"| call top-3 accuracy | {m['top3_accuracy']:.4f} | |",
        f"| call NLL | {m['call_nll']:.4f} | |",
        f"| call ECE ({ECE_BINS} bins) | {m['call_ece']:.4f} | |",
        f"| partner HCP MAE (mean of belief) | {m['partner_hcp_mae']:.3f} | {m['partner_hcp_mae_prior']:.3f} |",
        f"| suit length MAE (mean of belief) | {m['suit_length_mae']:.3f} | {m['suit_length_mae_prior']:.3f} |",
        f"| card holder log-loss (unseen cards) | {m['card_logloss']:.4f} | {m['card_logloss_prior']:.4f} |",
        f"| card holder Brier (unseen cards) | {m['card_brier']:.4f} | {m['card_brier_prior']:.4f} |",
        "",
        *(["By bidder (each one's test auctions): " + "; ".join(
            f"{name} {part['metrics']['call_accuracy']:.4f} call accuracy, {part['metrics']['partner_hcp_mae']:.3f} "
            f"partner HCP MAE ({part['metrics']['decision_points']} decision points, `plots/by_position-{name}.csv`)"
            for name, part in by_bidder.items()), ""] if by_bidder else []),
        "Accuracy by auction position: `plots/by_position.csv`; reliability: `plots/calibration.csv`;",
        "training curve: `plots/train_log.csv`.",
        "",
        "## Use",
        "`Bidder.load(<this folder>)` (bridgeflow.training.bidding.bidder); `bridgeflow explain --checkpoint <this folder> ...`.",
        "Belief seats are relative to the player to call: LHO, partner, RHO.",
    ]
    return "\n".join(lines) + "\n"


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow bsm", description="Train the bidding system model (BSM).")
    parser.add_argument("--records", default="data/ingest/records", help="folder of records *.parquet (RECORDS schema)")
    parser.add_argument("--out", default="data/bsm", help="checkpoint, metrics, plots and model card go here")
    parser.add_argument("--cache", default="data/cache/bsm", help="decision-point arrays, one folder per input hash")
    params = ParamsArguments(parser, ["bsm"], bare="bsm")
    parser.add_argument("--fresh", action="store_true", help="ignore an existing checkpoint in --out")
    parser.add_argument("--init", help="warm-start from this trained BSM (model.pt or its folder): same arch params, "
                                       "new optimizer and lr schedule")
    parser.add_argument("--selfplay", help="policy iteration: train on this selfplay stage's decisions/ (soft targets "
                                           "pi'), mixed with the --records auctions")
    parser.add_argument("--imitation-fraction", type=float, default=0.3,
                        help="with --selfplay: share of the training auctions drawn from --records (0 <= f < 1)")
    parser.add_argument("--target-gate", type=float, default=0.0,
                        help="with --selfplay: keep the search's Q only where it differs from the network's favourite's "
                             "by more than this many standard errors (0: every Q counts)")
    parser.add_argument("--target-confirm", type=float, default=0.0,
                        help="with --selfplay: where the favourite's Q beats every other's by more than this many "
                             "standard errors, train on the favourite alone (0: never)")
    args = parser.parse_args(argv)
    cfg = params.parsed(args).loaded("bsm", load_config)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    out, records = Path(args.out), Path(args.records)
    if args.selfplay:
        if not 0 <= args.imitation_fraction < 1:
            parser.error("--imitation-fraction must be in [0, 1)")
        if args.target_gate < 0 or args.target_confirm < 0:
            parser.error("--target-gate and --target-confirm must be >= 0")
        existing(args.selfplay, "self-play decisions (--selfplay)")
    corpus = load_corpus(records, Path(args.cache))
    if args.selfplay:
        corpus = selfplay_corpus(Path(args.selfplay), corpus, args.imitation_fraction, cfg.seed, Path(args.cache),
                                 args.target_gate, args.target_confirm)
    print(f"bsm: {corpus.meta['auctions']} auctions, {corpus.meta['decision_points']} decision points "
          f"({corpus.meta['auctions_by_split']}) from {records}")
    result = train(cfg, corpus, out, fresh=args.fresh, init=args.init)
    test_ids = corpus.sequences(SPLITS[2], cfg.sources, cfg.bidders)
    report = evaluate(result["model"], corpus, test_ids, cfg.device)
    by_bidder = evaluate_by_bidder(result["model"], corpus, cfg, test_ids)
    metrics = {"schema_version": SCHEMA_VERSION, **report["metrics"], "steps": result["step"],
               "train_samples_per_s": result["samples_per_s"],
               **({"by_bidder": {name: part["metrics"] for name, part in by_bidder.items()}} if by_bidder else {})}
    _save({"model_config": asdict(cfg.model()), "model": result["model"].state_dict(), "data": corpus.meta}, out / FILE_OF["BSM"])
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    write_csv(out / "plots" / "train_log.csv", result["log"])
    write_csv(out / "plots" / "by_position.csv", report["by_position"])
    for name, part in by_bidder.items():
        write_csv(out / "plots" / f"by_position-{name}.csv", part["by_position"])
    write_csv(out / "plots" / "calibration.csv", report["calibration"])
    (out / "MODEL_CARD.md").write_text(model_card(cfg, corpus, result, report, records, by_bidder))
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()}, indent=1))
    return metrics
