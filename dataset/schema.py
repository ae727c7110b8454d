"""The Arrow schemas of every table bridgeflow writes, in one place, and the conversion of an
accepted `BoardRecord` into a records row (derived columns included).

Layouts follow docs/conventions.md: owner int8[52] (seat per card, -1 unknown), dd_tricks int8[20] =
[declarer N,E,S,W][strain C,D,H,S,NT] flattened declarer-major.

A bidding problem (a board of BEN's Challenges files: `[Scoring "Facit"]` and an award table in
the comment after it, `dataset.facit`) is a records row with its deal, dealer and vulnerability and
two columns of its own, both null on every other row:
  award_table     list<struct<contract, points>>: the table's pairs in the file's order, contract
                  normalised as facit does ("4S", "N6N", "E5CX", "E2HP" kept though it never
                  matches), a points-first file's pairs swapped;
  problem_script  list<int8>: the [Auction] section from the dealer's seat, call indices where the
                  script gives a call (the opponents' calls and our side's own), -1 where our side
                  (N/S) is to call (the file's AC); null for an uncontested problem.
Its auction, contract and result columns are null: a script is not an auction, so nothing that
reads `auction` (the BSM's training data, the catalog's views) takes a problem for a board played."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

from .encodings import CARD_HCP, deal_id, deal_to_pbn
from .record import BoardRecord, Rejected

# The version of every stored layout (Parquet schemas, manifests, summaries, model cards): bump it
# when a column or key changes meaning, so a reader can tell old files from new ones. A new column
# that is null wherever older files hold a row (award_table, problem_script) changes no meaning.
SCHEMA_VERSION = 1
VERSION_METADATA = {"bridgeflow_schema_version": str(SCHEMA_VERSION)}

# How every Parquet file of the project is written (shards, parts, label stores).
PARQUET_OPTIONS = {"compression": "zstd", "row_group_size": 64 * 1024}

# Fixed lengths (52, 20, 4, 16) are documented, not typed: Parquet has no fixed-size list, and a
# null fixed-size list does not read back.
OWNER = pa.list_(pa.int8())  # 52
DD_TABLE = pa.list_(pa.int8())  # 20
AWARD = pa.struct([pa.field("contract", pa.string()), pa.field("points", pa.int32())])
CARD_SUIT = np.arange(52) // 13

RECORDS = pa.schema(
    [
        pa.field("record_id", pa.uint64(), nullable=False),
        pa.field("deal_id", pa.uint64()),  # null only when a hand is unknown
        pa.field("owner", OWNER),  # null when the record has no deal at all
        pa.field("deal", pa.string()),  # PBN "N:K843.Q92.A75.J64 ..." ('-' = unknown hand)
        pa.field("dealer", pa.int8()),
        pa.field("vulnerability", pa.int8()),
        pa.field("board", pa.int32()),
        pa.field("event", pa.string()),
        pa.field("site", pa.string()),
        pa.field("date", pa.string()),  # as written: "2014.07.??" is legal PBN
        pa.field("room", pa.string()),
        pa.field("scoring", pa.string()),
        pa.field("players", pa.list_(pa.string())),  # 4: N, E, S, W
        # precomputed for analysts' filters
        pa.field("hcp", pa.list_(pa.int8())),  # 4: per seat N,E,S,W
        pa.field("suit_lengths", pa.list_(pa.int8())),  # 16: [seat][suit C,D,H,S]
        # the auction
        pa.field("auction", pa.list_(pa.int8())),  # call indices from dealer; null = none given (or a problem)
        pa.field("alerts", pa.list_(pa.bool_())),
        pa.field("explanations", pa.list_(pa.string())),
        pa.field("auction_complete", pa.bool_()),
        # a bidding problem (docs/conventions.md, "Bidding problems (Facit)"): a deal with an award table, not
        # a board played (its auction, contract and result are null); both columns null elsewhere
        pa.field("award_table", pa.list_(AWARD)),  # (contract, points) in the file's order: "4S", "N6N", "E5CX"
        pa.field("problem_script", pa.list_(pa.int8())),  # from dealer: calls, -1 where N/S call; null = none
        # the contract and result
        pa.field("contract", pa.string()),  # "4HX", "Pass" for passed out
        pa.field("contract_level", pa.int8()),  # 0 = passed out
        pa.field("contract_strain", pa.int8()),
        pa.field("contract_doubled", pa.int8()),
        pa.field("declarer", pa.int8()),
        pa.field("tricks", pa.int8()),  # declarer's tricks
        pa.field("claim", pa.int8()),
        pa.field("play", pa.list_(pa.int8())),  # cards in the order played; -1 a card not played (PBN's `-`)
        pa.field("score_ns", pa.int32()),  # duplicate score, NS viewpoint, from contract+tricks+vul
        pa.field("source_score", pa.string()),
        pa.field("dd_tricks", pa.list_(pa.int8())),  # 20 cells or null; cells null where unknown
        pa.field("tags", pa.map_(pa.string(), pa.string())),
        pa.field("repairs", pa.list_(pa.string())),  # record.Repair values; null when none was needed
        # provenance
        pa.field("source_file", pa.string(), nullable=False),
        pa.field("source_format", pa.string(), nullable=False),
        pa.field("source_position", pa.int32(), nullable=False),
        pa.field("source_line", pa.int32(), nullable=False),
    ],
    metadata=VERSION_METADATA,
)

QUARANTINE = pa.schema(
    [
        pa.field("record_id", pa.uint64(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
        pa.field("source_format", pa.string(), nullable=False),
        pa.field("source_position", pa.int32(), nullable=False),
        pa.field("source_line", pa.int32(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),
        pa.field("message", pa.string(), nullable=False),
        pa.field("raw_text", pa.string(), nullable=False),
    ],
    metadata=VERSION_METADATA,
)


def record_id(input_prefix: str, source_file: str, position: int) -> int:
    """Stable id of a record: hash of (input glob's literal prefix, path below it, ordinal). A path
    that is not UTF-8 (the OS gives it with surrogateescape) is hashed as its own bytes."""
    key = f"{input_prefix}\x00{source_file}\x00{position}".encode("utf-8", "surrogateescape")
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")


def records_row(record: BoardRecord, record_id_value: int) -> dict:
    """An accepted (validated) record -> a dict matching RECORDS."""
    from .scoring import score_ns  # scoring imports encodings only; kept local to avoid a cycle

    owner = record.owner
    complete = owner is not None and bool((owner >= 0).all())
    hcp = suit_lengths = None
    if owner is not None:
        held = owner >= 0
        seats = owner[held].astype(np.int64)
        hcp = np.bincount(seats, weights=CARD_HCP[held], minlength=4).astype(int).tolist()
        suit_lengths = np.bincount(seats * 4 + CARD_SUIT[held], minlength=16).tolist()
    contract = None
    if record.contract_level == 0:
        contract = "Pass"
    elif record.contract_level is not None and record.contract_strain is not None:
        contract = f"{record.contract_level}{('C', 'D', 'H', 'S', 'NT')[record.contract_strain]}"
        contract += ("", "X", "XX")[record.contract_doubled or 0]
    score = None
    if record.contract_level == 0:
        score = 0
    elif None not in (record.contract_level, record.contract_strain, record.declarer, record.tricks, record.vulnerability):
        score = score_ns(
            record.contract_level, record.contract_strain, record.contract_doubled or 0,
            record.declarer, record.vulnerability, record.tricks,
        )
    return {
        "record_id": record_id_value,
        "deal_id": deal_id(owner) if complete else None,
        "owner": owner.tolist() if owner is not None else None,
        "deal": deal_to_pbn(owner) if owner is not None else None,
        "dealer": record.dealer,
        "vulnerability": record.vulnerability,
        "board": record.board,
        "event": record.event,
        "site": record.site,
        "date": record.date,
        "room": record.room,
        "scoring": record.scoring,
        "players": record.players,
        "hcp": hcp,
        "suit_lengths": suit_lengths,
        "auction": record.auction,
        "alerts": record.alerts,
        "explanations": record.explanations,
        "auction_complete": record.auction_complete,
        "award_table": None if record.award_table is None else [
            {"contract": contract, "points": points} for contract, points in record.award_table],
        "problem_script": record.problem_script,
        "contract": contract,
        "contract_level": record.contract_level,
        "contract_strain": record.contract_strain,
        "contract_doubled": record.contract_doubled,
        "declarer": record.declarer,
        "tricks": record.tricks,
        "claim": record.claim,
        "play": record.play,
        "score_ns": score,
        "source_score": record.source_score,
        "dd_tricks": record.dd_tricks,
        "tags": list(record.tags.items()) if record.tags else None,
        "repairs": [repair.value for repair in record.repairs] or None,
        "source_file": record.source_file,
        "source_format": record.source_format,
        "source_position": record.source_position,
        "source_line": record.source_line,
    }


def quarantine_row(rejected: Rejected, record_id_value: int) -> dict:
    return {
        "record_id": record_id_value,
        "source_file": rejected.source_file,
        "source_format": rejected.source_format,
        "source_position": rejected.source_position,
        "source_line": rejected.source_line,
        "reason": rejected.reason.value,
        "field": rejected.field,
        "message": rejected.message,
        "raw_text": rejected.raw_text,
    }


# The DD store: one row per distinct deal_id (written by the ddlabel stage).
DD_LABELS = pa.schema(
    [
        pa.field("deal_id", pa.uint64(), nullable=False),
        pa.field("owner", OWNER, nullable=False),
        pa.field("dd_tricks", DD_TABLE, nullable=False),  # [declarer N,E,S,W][strain C,D,H,S,NT]
        pa.field("par_score", pa.list_(pa.int32())),  # 16, NS viewpoint, index dealer*4 + vul
        pa.field("par_contracts", pa.list_(pa.string())),  # 16, e.g. "4S-N,4S-S"
        pa.field("solver", pa.string(), nullable=False),  # "dds" | "nn-dda" (estimated)
        pa.field("solver_version", pa.string(), nullable=False),
    ],
    metadata=VERSION_METADATA,
)

# Deals the ddlabel stage could not label (not a full deal, DDS rejected it or died on it).
DD_QUARANTINE = pa.schema(
    [
        pa.field("deal_id", pa.uint64(), nullable=False),
        pa.field("owner", pa.list_(pa.int8())),  # as the records give it (may be malformed)
        pa.field("reason", pa.string(), nullable=False),  # record.Reason value, solver_error, solver_crashed
        pa.field("message", pa.string(), nullable=False),
        pa.field("records", pa.int32(), nullable=False),  # how many records hold this deal
    ],
    metadata=VERSION_METADATA,
)

# Records whose source DD table disagrees with the solver's (one row per record).
DD_MISMATCHES = pa.schema(
    [
        pa.field("record_id", pa.uint64(), nullable=False),
        pa.field("deal_id", pa.uint64(), nullable=False),
        pa.field("cells", pa.list_(pa.int8()), nullable=False),  # differing cells, declarer * 5 + strain
        pa.field("given", DD_TABLE, nullable=False),  # the source's table (null = unknown)
        pa.field("dd_tricks", DD_TABLE, nullable=False),  # the solver's
    ],
    metadata=VERSION_METADATA,
)

# Self-play decisions (the selfplay stage, policy iteration): one row per call of every generated
# auction, in auction order. At a network's decision `policy` is the improved policy pi' over
# `candidates` on the tempered prior, `call` was drawn from it, and `target` is the training
# target (the same update on the network's own prior, training/selfplay/actor.py); a rule-bidder
# partner's call has actor "rule", the `against` agent's "opponent": one candidate (its call),
# policy and target [1], never trained on.
SELFPLAY_DECISIONS = pa.schema(
    [
        pa.field("generation", pa.int32(), nullable=False),
        pa.field("board", pa.int32(), nullable=False),  # 1-based in the generation: duplicate dealer and vul
        pa.field("deal_id", pa.uint64(), nullable=False),
        pa.field("owner", OWNER, nullable=False),
        pa.field("dealer", pa.int8(), nullable=False),
        pa.field("vulnerability", pa.int8(), nullable=False),
        pa.field("position", pa.int16(), nullable=False),  # index of this call in the auction
        pa.field("seat", pa.int8(), nullable=False),
        pa.field("auction", pa.list_(pa.int8()), nullable=False),  # the calls before this one
        pa.field("actor", pa.string(), nullable=False),  # "bsm" (the network, searched or not) | "rule" | "opponent"
        pa.field("searched", pa.bool_(), nullable=False),
        pa.field("skipped", pa.string()),  # why not searched: near_certain, rule, opponent, or the search's fallback
        pa.field("candidates", pa.list_(pa.int8()), nullable=False),  # calls, likeliest first
        pa.field("prior", pa.list_(pa.float32()), nullable=False),  # the network's P(call), untempered
        pa.field("tempered", pa.list_(pa.float32()), nullable=False),  # pi of the soft update: tempered, floored, over the candidates
        pa.field("q", pa.list_(pa.float32())),  # mean IMPs per candidate (null when not searched)
        pa.field("se", pa.list_(pa.float32())),  # their standard errors
        pa.field("samples", pa.int16(), nullable=False),  # deals rolled out (0 when not searched)
        pa.field("policy", pa.list_(pa.float32()), nullable=False),  # pi' per candidate, sums to 1
        pa.field("target", pa.list_(pa.float32()), nullable=False),  # the training target per candidate, sums to 1
        pa.field("call", pa.int8(), nullable=False),  # the call played
        pa.field("prior_best", pa.int8(), nullable=False),  # argmax of the prior
        pa.field("policy_best", pa.int8(), nullable=False),  # argmax of pi'
    ],
    metadata=VERSION_METADATA,
)

__all__ = [
    "RECORDS", "QUARANTINE", "DD_LABELS", "DD_QUARANTINE", "DD_MISMATCHES", "SELFPLAY_DECISIONS",
    "records_row", "quarantine_row", "record_id",
]
