"""Short digests, one implementation each: of bytes, of a file, of a JSON-able key, and a seed
drawn from text parts.

blake2b with an 8-byte digest (16 hex digits) names work and inputs: resume keys, cache folders,
checkpoint hashes, per-table seeds. sha256 names what a user may check by hand: frozen label files,
model cards, the model loaders' log. Persisted digests depend on these exact bytes: changing an
algorithm or a serialisation here renames every resume key and cache. deal_id is not here: its
hash is a convention of its own (encodings.deal_id, docs/conventions.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def digest(data: bytes, size: int = 8) -> str:
    """Hex blake2b of `data` with a `size`-byte digest."""
    return hashlib.blake2b(data, digest_size=size).hexdigest()


def file_digest(path: str | Path) -> str:
    """`digest` of a file's bytes."""
    return digest(Path(path).read_bytes())


def key_digest(decisive) -> str:
    """`digest` of a JSON-able value (keys sorted): names a run by everything that decides it."""
    return digest(json.dumps(decisive, sort_keys=True).encode())


def seed_of(*parts) -> int:
    """A 64-bit seed from parts joined by NUL (e.g. seed, match, deal_id, table)."""
    key = "\0".join(map(str, parts)).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")


def sha256_digest(data: bytes) -> str:
    """Hex sha256 of `data` (all 64 digits; callers shorten it)."""
    return hashlib.sha256(data).hexdigest()
