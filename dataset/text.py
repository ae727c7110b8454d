"""Bytes to text: the byte order marks every reader honours, in one table."""

from __future__ import annotations

import codecs

# Longest first: a UTF-32-LE mark begins with the UTF-16-LE one.
BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
                    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def bom_encoding(data: bytes) -> tuple[str | None, int]:
    """(the encoding a byte order mark at the start of `data` names, the mark's length in bytes),
    or (None, 0) when `data` starts with none."""
    return next(((encoding, len(mark)) for mark, encoding in BYTE_ORDER_MARKS if data.startswith(mark)), (None, 0))


def is_wide(encoding: str | None) -> bool:
    """UTF-16 or UTF-32: text whose bytes cannot be cut or scanned as ASCII."""
    return encoding is not None and encoding != "utf-8"
