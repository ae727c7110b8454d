"""Parquet shards checked before a job reads them (`ddlabel --records`, `catalog`): a shard that
is not readable Parquet (truncated, overwritten: its footer cannot be read) is set aside and
listed with why, so the good shards next to it are still used; a shard of another schema (a
quarantine shard among records shards, a DD store given as records) is the user's mistake, and the
job refuses the folder with one line naming the odd files, rather than reading it with a wrong
count. The check reads each file's footer only (cheap at any size), so a data page damaged inside
an intact file is found when the page is read."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import InputError

NAMED = 3  # odd files named in the error line; the rest are counted


def schema_difference(actual: pa.Schema, expected: pa.Schema) -> str | None:
    """How `actual` differs from `expected` (column names and types), or None."""
    have, want = dict(zip(actual.names, actual.types)), dict(zip(expected.names, expected.types))
    missing = [name for name in want if name not in have]
    if missing:
        return f"no column {', '.join(missing[:NAMED])}{' ...' if len(missing) > NAMED else ''}"
    extra = [name for name in have if name not in want]
    if extra:
        return f"a column {', '.join(extra[:NAMED])} the schema does not have"
    retyped = next((name for name in want if have[name] != want[name]), None)
    if retyped:
        return f"column {retyped} is {have[retyped]}, not {want[retyped]}"
    return None


def checked_shards(files: list[str | Path], expected: pa.Schema, what: str, kind: str) -> tuple[list[str], list[dict]]:
    """(the files that are readable shards of `expected`, [{"file", "why"}] for those that are not
    readable Parquet). InputError, naming them, when any file has another schema, or when no file
    is left; `what` names the option (--records), `kind` the shards (records)."""
    good, unreadable, odd = [], [], []
    for path in map(str, files):
        try:
            actual = pq.read_schema(path)
        except (OSError, pa.ArrowException) as error:
            unreadable.append({"file": path, "why": f"not a readable Parquet file: {' '.join(str(error).split())}"})
            continue
        difference = schema_difference(actual, expected)
        if difference:
            odd.append(f"{path} ({difference})")
        else:
            good.append(path)
    if odd:
        named = "; ".join(odd[:NAMED]) + (f"; and {len(odd) - NAMED} more" if len(odd) > NAMED else "")
        raise InputError(f"{what}: {len(odd)} of {len(files)} Parquet files are not {kind} shards: {named}")
    if not good:
        first = unreadable[0]
        raise InputError(f"{what}: no readable {kind} shard ({len(unreadable)} unreadable, e.g. {first['file']}: "
                         f"{first['why']})")
    return good, unreadable
