"""Decision points for the bidding system model (BSM).

A decision point is one call of one complete auction, seen by the player who made it: their 13
cards, the calls before it, vulnerability and seats. The records shards are read once into compact
per-auction arrays (flat calls + offsets, owner, dealer, vulnerability, deal_id, split, source,
bidder),
saved as .npy under a folder named by a hash of the input files and memory-mapped afterwards; each
batch is encoded from them on the fly with vectorised numpy, so nothing is re-parsed per epoch.

The training unit is a *seat sequence*: one auction seen by one of its four players (id =
auction * 4 + seat). A recurrent model reads the auction once and answers at each of that player's
turns, so one sequence carries all of the player's decision points (the model is causal).

A self-play corpus (`selfplay_corpus`: policy iteration's generated auctions, mixed with a share
of an imitation corpus) also carries a soft call target per decision point: the `target` the
self-play actor recorded (the search's improved policy on the network's own prior), the one-hot
of the call for imitation auctions, none for a rule-bidder partner's calls (their seats still
train the belief heads on the true hands)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from bridgeflow.dataset.atomic import atomic_path
from bridgeflow.dataset.auction import auction_scan, auction_status, legal_masks
from bridgeflow.dataset.digests import digest
from bridgeflow.dataset.encodings import CARD_HCP, DOUBLE, NUM_CALLS, PASS, REDOUBLE
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.splits import SPLITS, split_of

CACHE_VERSION = 2
SELFPLAY_SOURCE = "selfplay"  # source_format of generated auctions in a self-play corpus
HARD, UNTRAINED = -1, -2  # target_row: the call's one-hot | no call target (a rule partner's call)
COLUMNS = ["deal_id", "owner", "dealer", "vulnerability", "auction", "auction_complete", "source_format", "players"]
START, PAD = NUM_CALLS, NUM_CALLS + 1  # extra tokens of the recurrent input: before the first call, padding
STATIC = 52 + 2 + 4  # my cards, vulnerable (we, they), my seat relative to dealer
OPENSPIEL_FEATURES = 480
# OpenSpiel numbers cards 4 * rank + suit; OPENSPIEL_CARD[i] is our card at OpenSpiel position i.
OPENSPIEL_CARD = np.array([(i % 4) * 13 + i // 4 for i in range(52)])
OUR_CARD_IN_OPENSPIEL = np.argsort(OPENSPIEL_CARD)  # [c]: OpenSpiel position of our card c


# ------------------------------------------------------------------ encoding

def openspiel_history_bits(calls: np.ndarray, dealer: np.ndarray, player: np.ndarray, last_bid: np.ndarray) -> np.ndarray:
    """For each call, the bit it sets in OpenSpiel's 424-wide bidding history seen by `player`
    (-1 = none): opening passes by relative seat, then per bid 4 bidders x (bid, X, XX)."""
    steps = calls.shape[1]
    relative = (dealer[:, None] + np.arange(steps) - player[:, None]) % 4
    anchor = 4 + (np.maximum(last_bid, 3) - 3) * 12 + relative
    bits = np.full(calls.shape, -1, np.int64)
    bits = np.where((calls == PASS) & (last_bid < 0), relative, bits)
    bits = np.where(calls == DOUBLE, anchor + 4, bits)
    bits = np.where(calls == REDOUBLE, anchor + 8, bits)
    return np.where(calls > REDOUBLE, 4 + (calls.astype(np.int64) - 3) * 12 + relative, bits)


def encode(
    hand: np.ndarray, player: np.ndarray, dealer: np.ndarray, vul: np.ndarray, calls: np.ndarray,
    decision: np.ndarray, features480: bool, owner: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Model inputs (and targets when `owner` is given) for a batch of seat sequences.

    hand bool[B, 52] the player's cards; calls int[B, T] (-1 = none); decision bool[B, T] marks
    the steps to answer (step t predicts calls[:, t]). Per-sequence arrays feed the recurrent
    trunk; per-decision-point arrays ([N, ...], row-major order of `decision`) feed the heads."""
    batch, steps = calls.shape
    player, dealer, vul = (np.asarray(x, np.int64) for x in (player, dealer, vul))
    tokens = np.full((batch, steps), START, np.int64)
    tokens[:, 1:] = np.where(calls[:, :-1] >= 0, calls[:, :-1], PAD)
    vul_ns, vul_ew = np.isin(vul, (1, 3)), np.isin(vul, (2, 3))
    we = np.where(player % 2 == 0, vul_ns, vul_ew)
    they = np.where(player % 2 == 0, vul_ew, vul_ns)
    static = np.zeros((batch, STATIC), np.float32)
    static[:, :52] = hand
    static[:, 52], static[:, 53] = we, they
    static[np.arange(batch), 54 + (player - dealer) % 4] = 1
    row, position = np.nonzero(decision)
    state = auction_scan(calls, dealer)
    at = {name: value[row, position] for name, value in state.items()}
    out = {
        "tokens": tokens,
        "turn": (dealer[:, None] + np.arange(steps) - player[:, None]) % 4,
        "static": static,
        "decision": decision,
        "row": row,
        "position": position,
        "legal": legal_masks(at, player[row]),
        "mine": hand[row].astype(bool),
    }
    if features480:
        bits = openspiel_history_bits(calls, dealer, player, state["last_bid"])[row]
        seen = (np.arange(steps) < position[:, None]) & (bits >= 0)
        x = np.zeros((len(row), OPENSPIEL_FEATURES), np.float32)
        x[np.arange(len(row)), we[row].astype(np.int64)] = 1
        x[np.arange(len(row)), 2 + they[row].astype(np.int64)] = 1
        x[np.nonzero(seen)[0], 4 + bits[seen]] = 1
        x[:, 428:] = hand[row][:, OPENSPIEL_CARD]
        out["x480"] = x
    if owner is not None:
        relative = ((owner[row].astype(np.int64) - player[row, None]) % 4)  # 0 me, 1 LHO, 2 partner, 3 RHO
        out["call"] = calls[row, position].astype(np.int64)
        out["holder"] = relative
        out["partner_hcp"] = (CARD_HCP * (relative == 2)).sum(axis=1).astype(np.int64)
        grid = relative.reshape(-1, 4, 13)
        out["lengths"] = np.stack([(grid == k).sum(axis=2) for k in (1, 2, 3)], axis=1).astype(np.int64)
    return out


# ------------------------------------------------------------------ the cache

def record_files(records: Path) -> list[Path]:
    return sorted(path for path in Path(records).rglob("*.parquet") if not path.name.startswith("."))


def cache_key(files: Sequence[Path], records: Path) -> str:
    """Hash of the input files' names, sizes and mtimes (and the cache layout version)."""
    parts = [f"bsm-cache-{CACHE_VERSION}"]
    for path in files:
        stat = path.stat()
        parts.append(f"\0{path.relative_to(records)}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return digest("".join(parts).encode())


def _read_auctions(path: Path) -> dict[str, np.ndarray]:
    """The usable rows of one shard: complete auction, complete deal. Read with polars: pyarrow 25
    cannot read back a null fixed-size-list `owner` (apache/arrow#35692), which a record without
    a deal has."""
    frame = pl.read_parquet(path, columns=COLUMNS).with_columns(pl.col("owner").cast(pl.List(pl.Int8))).filter(
        pl.col("auction_complete").fill_null(False)
        & pl.all_horizontal([pl.col(name).is_not_null() for name in ("deal_id", "owner", "dealer", "vulnerability", "auction")])
        & (pl.col("auction").list.len() >= 4)
        & (pl.col("owner").list.len() == 52)
    )
    return {
        "calls": frame["auction"].explode().to_numpy().astype(np.int8),
        "length": frame["auction"].list.len().to_numpy().astype(np.int64),
        "owner": frame["owner"].explode().to_numpy().astype(np.int8).reshape(-1, 52),
        "dealer": frame["dealer"].to_numpy().astype(np.int8),
        "vul": frame["vulnerability"].to_numpy().astype(np.int8),
        "deal_id": frame["deal_id"].to_numpy().astype(np.uint64),
        "source": frame["source_format"].to_numpy(),
        "bidder": frame.select(bidder_of(pl.col("players"))).to_series().to_numpy(),
    }


def bidder_of(players: pl.Expr) -> pl.Expr:
    """The auction's bidder: the one name at all four seats (what `bridgeflow synth` writes for
    its bidder; also a table of robots), else "" (people, mixed or unknown players)."""
    same = (players.list.len() == 4) & (players.list.n_unique() == 1)
    return pl.when(same).then(players.list.first()).otherwise(None).fill_null("")


def _playable(calls: np.ndarray, length: np.ndarray, dealer: np.ndarray, block: int = 65536) -> np.ndarray:
    """bool per auction: every call legal and the auction finished exactly at its last call."""
    offsets = np.concatenate([[0], np.cumsum(length)])
    ok = np.zeros(len(length), bool)
    for first in range(0, len(length), block):
        last = min(first + block, len(length))
        width = max(int(length[first:last].max()), 1)
        padded = np.full((last - first, width), -1, np.int16)
        padded[np.arange(width) < length[first:last, None]] = calls[offsets[first]:offsets[last]]
        legal, finished = auction_status(padded, dealer[first:last].astype(np.int64))
        ok[first:last] = legal & finished
    return ok


def build_cache(records: Path, cache_root: Path) -> Path:
    """Read every *.parquet under `records` once into `cache_root/<key>/`; reuse it if present."""
    records, cache_root = Path(records), Path(cache_root)
    files = record_files(records)
    if not files:
        raise FileNotFoundError(f"no *.parquet files under {records}")
    folder = cache_root / cache_key(files, records)
    if (folder / "meta.json").exists():
        return folder
    parts = [_read_auctions(path) for path in files]
    data = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    usable = _playable(data["calls"], data["length"], data["dealer"]) & (data["owner"] >= 0).all(axis=1)
    sources, source = np.unique(data["source"][usable].astype(str), return_inverse=True)
    sources = sources.tolist()
    bidder_names = data["bidder"][usable].astype(str).tolist()
    bidders = sorted(set(bidder_names) - {""})
    index_of = {name: index for index, name in enumerate(bidders)} | {"": -1}
    bidder = np.array([index_of[name] for name in bidder_names], np.int32)
    arrays = {
        "calls": data["calls"][np.repeat(usable, data["length"])],
        "offsets": np.concatenate([[0], np.cumsum(data["length"][usable])]).astype(np.int64),
        "owner": data["owner"][usable],
        "dealer": data["dealer"][usable],
        "vul": data["vul"][usable],
        "deal_id": data["deal_id"][usable],
        "split": np.array([SPLITS.index(split_of(int(d))) for d in data["deal_id"][usable]], np.int8),
        "source": source.astype(np.int8),
        "bidder": bidder,
    }
    meta = {
        "records": str(records), "files": [str(path.relative_to(records)) for path in files],
        "auctions": int(usable.sum()), "rejected_illegal": int((~usable).sum()),
        "decision_points": int(len(arrays["calls"])), "sources": sources, "bidders": bidders,
        "auctions_by_split": {name: int((arrays["split"] == i).sum()) for i, name in enumerate(SPLITS)},
    }
    return write_cache(folder, arrays, meta)


def write_cache(folder: Path, arrays: dict[str, np.ndarray], meta: dict) -> Path:
    """The arrays (one .npy each) and meta.json into `folder`, built beside it and moved in whole,
    so a killed build never leaves a cache that looks complete."""
    with atomic_path(folder) as staging:
        staging.mkdir()
        for name, value in arrays.items():
            np.save(staging / f"{name}.npy", value)
        (staging / "meta.json").write_text(json.dumps(meta, indent=2))
    return folder


@lru_cache(maxsize=4)
def _permutation(n: int, seed: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([seed, epoch]).permutation(n)


def batch_rows(n: int, batch_size: int, seed: int, step: int) -> np.ndarray:
    """Rows 0..n-1 of training batch `step`. Each epoch is a permutation seeded by (seed, epoch),
    so a batch is a pure function of (seed, step) and a resumed run sees the same data."""
    positions = np.arange(step * batch_size, (step + 1) * batch_size)
    epochs = positions // n
    rows = np.empty(batch_size, np.int64)
    for epoch in np.unique(epochs):
        chosen = epochs == epoch
        rows[chosen] = _permutation(n, seed, int(epoch))[positions[chosen] % n]
    return rows


@dataclass
class Corpus:
    """The memory-mapped per-auction arrays of one cache folder."""

    folder: Path
    calls: np.ndarray
    offsets: np.ndarray
    owner: np.ndarray
    dealer: np.ndarray
    vul: np.ndarray
    deal_id: np.ndarray
    split: np.ndarray
    source: np.ndarray
    bidder: np.ndarray  # index into meta["bidders"], -1 = none
    meta: dict
    policy: np.ndarray | None = None  # float32[n, 38] soft call targets (self-play corpus only)
    target_row: np.ndarray | None = None  # int32 per call: its row of `policy`, HARD or UNTRAINED

    @classmethod
    def open(cls, folder: Path) -> "Corpus":
        folder = Path(folder)
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in
                  ("calls", "offsets", "owner", "dealer", "vul", "deal_id", "split", "source", "bidder")}
        arrays |= {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in ("policy", "target_row")
                   if (folder / f"{name}.npy").exists()}
        return cls(folder=folder, meta=json.loads((folder / "meta.json").read_text()), **arrays)

    def sequences(self, split: str, sources: str | Sequence[str] = "all", bidders: str | Sequence[str] = "all") -> np.ndarray:
        """Seat-sequence ids (auction * 4 + seat) of one split, restricted to `sources` (source_format
        values) and `bidders` (the names at all four seats: rule, ben-nosearch, ...)."""
        chosen = np.asarray(self.split) == SPLITS.index(split)
        if sources != "all":
            chosen &= np.isin(self.source, [i for i, name in enumerate(self.meta["sources"]) if name in sources])
        if bidders != "all":
            chosen &= np.isin(self.bidder, [i for i, name in enumerate(self.meta["bidders"]) if name in bidders])
        auctions = np.flatnonzero(chosen)
        return (auctions[:, None] * 4 + np.arange(4)).reshape(-1)

    def batch(self, ids: np.ndarray, features480: bool = False) -> dict[str, np.ndarray]:
        """Encoded inputs and targets of seat sequences `ids`: every call of each auction made by the sequence's player."""
        auction, player = ids // 4, ids % 4
        start = self.offsets[auction]
        length = self.offsets[auction + 1] - start
        steps = np.arange(int(length.max()))
        valid = steps < length[:, None]
        calls = np.where(valid, self.calls[np.where(valid, start[:, None] + steps, 0)], -1).astype(np.int16)
        dealer = self.dealer[auction].astype(np.int64)
        owner = self.owner[auction]
        decision = valid & ((dealer[:, None] + steps) % 4 == player[:, None])
        out = encode(owner == player[:, None], player, dealer, self.vul[auction], calls, decision, features480, owner)
        if self.target_row is not None:
            target_row = self.target_row[start[out["row"]] + out["position"]]
            target = np.zeros((len(target_row), NUM_CALLS), np.float32)
            target[np.arange(len(target_row)), out["call"]] = target_row == HARD
            soft = target_row >= 0
            target[soft] = self.policy[target_row[soft]]
            out["target"], out["trained"] = target, target_row != UNTRAINED
        return out


def load_corpus(records: Path, cache_root: Path) -> Corpus:
    return Corpus.open(build_cache(records, cache_root))


# ------------------------------------------------------------------ self-play corpora

def gated_target(prior: Sequence[float], target: Sequence[float], q: Sequence[float] | None,
                 se: Sequence[float] | None, gate: float, confirm: float = 0.0) -> np.ndarray:
    """A searched decision's target with only the search's clear evidence kept: a candidate whose Q
    is within `gate` standard errors (sqrt(se^2 + se_ref^2)) of the Q of the network's favourite
    keeps the favourite's target/prior ratio, i.e. its prior share. An 8-deal search's noise (se
    ~0.5 IMPs) becomes a target ratio of exp(Q / T) all the same; ungated, that noise softens every
    generation (docs/selfplay.md). `confirm` > 0: where the favourite's Q beats every other
    candidate's by more than `confirm` standard errors, the target is the favourite alone (the
    search confirms the network: its sureness is kept, tails included). Both 0, or an unsearched
    decision: `target` as generated."""
    target = np.asarray(target, np.float64)
    if (gate <= 0 and confirm <= 0) or q is None:
        return target
    prior, q, se = (np.asarray(x, np.float64) for x in (prior, q, se))
    ref = int(np.argmax(prior))
    others = np.arange(len(q)) != ref
    if confirm > 0 and (q[ref] - q[others] > confirm * np.hypot(se[others], se[ref])).all():
        return (~others).astype(np.float64)
    if gate <= 0:
        return target
    clear = np.abs(q - q[ref]) > gate * np.hypot(se, se[ref])
    ratio = target / prior
    gated = prior * np.where(clear, ratio, ratio[ref])
    return gated / gated.sum()


def _generated_auctions(decisions: Path, gate: float = 0.0, confirm: float = 0.0) -> dict[str, np.ndarray]:
    """SELFPLAY_DECISIONS rows (one per call) -> per-auction arrays, the dense target of every
    network call (by `gated_target` with `gate` and `confirm`) and each call's target row."""
    files = record_files(decisions)
    for path in files:
        if "target" not in pq.read_schema(path).names:
            raise InputError(f"self-play decisions {path}: no `target` column (written by an older selfplay; rerun it)")
    frame = pl.concat([pl.read_parquet(path, columns=["generation", "board", "deal_id", "owner", "dealer", "vulnerability",
                                                      "position", "actor", "candidates", "prior", "q", "se",
                                                      "target", "call"])
                       for path in files]).sort(["generation", "board", "position"])
    firsts = frame.filter(pl.col("position") == 0)
    length = frame.group_by(["generation", "board"], maintain_order=True).len()["len"].to_numpy().astype(np.int64)
    network = (frame["actor"] == "bsm").to_numpy()
    chosen = frame.filter(pl.col("actor") == "bsm")
    policy = np.zeros((len(chosen), NUM_CALLS), np.float32)
    rows = np.repeat(np.arange(len(policy)), chosen["candidates"].list.len().to_numpy())
    targets = chosen["target"].to_list()
    if gate > 0 or confirm > 0:
        searched = zip(chosen["prior"].to_list(), targets, chosen["q"].to_list(), chosen["se"].to_list())
        targets = [gated_target(prior, target, q, se, gate, confirm) for prior, target, q, se in searched]
    policy[rows, chosen["candidates"].explode().to_numpy().astype(np.int64)] = np.concatenate(targets)
    target_row = np.full(len(frame), UNTRAINED, np.int32)
    target_row[network] = np.arange(len(policy))
    return {
        "calls": frame["call"].to_numpy().astype(np.int8), "length": length,
        "owner": firsts["owner"].explode().to_numpy().astype(np.int8).reshape(-1, 52),
        "dealer": firsts["dealer"].to_numpy().astype(np.int8), "vul": firsts["vulnerability"].to_numpy().astype(np.int8),
        "deal_id": firsts["deal_id"].to_numpy().astype(np.uint64), "policy": policy, "target_row": target_row,
    }


def selfplay_corpus(decisions: Path, imitation: Corpus, fraction: float, seed: int, cache_root: Path,
                    gate: float = 0.0, confirm: float = 0.0) -> Corpus:
    """Generated auctions (`decisions`: the selfplay stage's folder of SELFPLAY_DECISIONS shards)
    with soft targets, plus imitation auctions with hard ones: a random share of its training
    auctions so that they make `fraction` of the training auctions, and all of its valid and test
    auctions (the held-out metrics measure how far meanings drift from the imitation). Cached
    like `build_cache`, under a key of both inputs, the fraction, the seed and the target rules
    (`gated_target`'s gate and confirm)."""
    decisions, cache_root = Path(decisions), Path(cache_root)
    files = record_files(decisions)
    if not files:
        raise InputError(f"self-play decisions {decisions}: no Parquet file in it")
    gated = (f"\0gate {gate}" if gate > 0 else "") + (f"\0confirm {confirm}" if confirm > 0 else "")  # plain keys kept
    key = digest(f"{cache_key(files, decisions)}\0{imitation.folder.name}\0{fraction}\0{seed}{gated}".encode())
    folder = cache_root / f"selfplay-{key}"
    if (folder / "meta.json").exists():
        return Corpus.open(folder)
    generated = _generated_auctions(decisions, gate, confirm)
    train = np.flatnonzero(np.asarray(imitation.split) == 0)
    wanted = int(round(len(generated["length"]) * fraction / (1 - fraction)))
    picked = np.sort(np.random.default_rng(seed).permutation(train)[:wanted])
    kept = np.concatenate([picked, np.flatnonzero(np.asarray(imitation.split) > 0)])
    starts, ends = imitation.offsets[kept], imitation.offsets[kept + 1]
    imitation_calls = np.concatenate([imitation.calls[a:b] for a, b in zip(starts, ends)]) if len(kept) else np.zeros(0, np.int8)
    names = imitation.meta["sources"] + [SELFPLAY_SOURCE]
    length = np.concatenate([generated["length"], ends - starts])
    arrays = {
        "calls": np.concatenate([generated["calls"], imitation_calls]).astype(np.int8),
        "offsets": np.concatenate([[0], np.cumsum(length)]).astype(np.int64),
        "owner": np.concatenate([generated["owner"], imitation.owner[kept]]),
        "dealer": np.concatenate([generated["dealer"], imitation.dealer[kept]]),
        "vul": np.concatenate([generated["vul"], imitation.vul[kept]]),
        "deal_id": np.concatenate([generated["deal_id"], imitation.deal_id[kept]]),
        "split": np.concatenate([[SPLITS.index(split_of(int(d))) for d in generated["deal_id"]],
                                 imitation.split[kept]]).astype(np.int8),
        "source": np.concatenate([np.full(len(generated["length"]), len(names) - 1), imitation.source[kept]]).astype(np.int8),
        "bidder": np.concatenate([np.full(len(generated["length"]), -1), imitation.bidder[kept]]).astype(np.int32),
        "policy": generated["policy"],
        "target_row": np.concatenate([generated["target_row"], np.full(len(imitation_calls), HARD, np.int32)]),
    }
    meta = {
        "records": f"{decisions} + {imitation.meta['records']}", "files": [str(path.relative_to(decisions)) for path in files],
        "auctions": len(length), "rejected_illegal": 0, "decision_points": int(len(arrays["calls"])), "sources": names,
        "bidders": imitation.meta["bidders"], "auctions_by_split": {name: int((arrays["split"] == i).sum()) for i, name in enumerate(SPLITS)},
        "generated_auctions": len(generated["length"]), "imitation_train_auctions": len(picked),
        "imitation_fraction": fraction, "target_gate": gate, "target_confirm": confirm,
    }
    return Corpus.open(write_cache(folder, arrays, meta))
