"""What every format reader must hold for any input, checked as ingest uses its items: shared by
the property tests of the PBN and LIN readers."""

from __future__ import annotations

from typing import Callable, Iterable

from bridgeflow.dataset.record import BoardRecord, Rejected
from bridgeflow.dataset.validate import check


def text_fields(value) -> list[str]:
    """Every string in a record's field (in lists and tag maps too)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = [text for pair in value.items() for text in pair]
    return [text for item in value for text in text_fields(item)] if isinstance(value, list) else []


def read_checked(parse: Callable[[bytes, str], Iterable], data: bytes, source_file: str) -> list[BoardRecord | Rejected]:
    """The reader's items for `data`: records or rejections numbered in order, validated without
    raising, all their text plain Unicode (no lone surrogates: it is written as UTF-8)."""
    items = [check(item) if isinstance(item, BoardRecord) else item for item in parse(data, source_file)]
    assert all(isinstance(item, (BoardRecord, Rejected)) for item in items)
    assert [item.source_position for item in items] == list(range(len(items)))
    for item in items:
        "".join(text_fields(list(vars(item).values())) + [str(item)]).encode("utf-8")
    return items
