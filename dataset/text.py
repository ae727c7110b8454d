"""Bytes to text: the byte order marks every reader honours, in one table, the invisible
characters every reader drops, and the one rule for reading a number."""

from __future__ import annotations

import codecs
import re
from bisect import bisect_left

from .record import Reason, RecordError

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


# Characters that show nothing and mean nothing in a bridge file: a byte order mark inside the file
# (files concatenated), zero-width spaces, word joiners. ZWJ and ZWNJ are kept: some scripts'
# names read differently without them.
_INVISIBLE = re.compile("[\ufeff\u200b\u2060]")


def drop_invisible(text: str) -> tuple[str, list[int]]:
    """`text` without invisible characters, and the 1-based lines that held one (ascending): a
    reader drops them and lists Repair.INVISIBLE_CHARACTER_DROPPED on the record of those lines."""
    if "\ufeff" not in text and "\u200b" not in text and "\u2060" not in text:  # faster than a search
        return text, []
    lines, line, counted = [], 1, 0
    for match in _INVISIBLE.finditer(text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return _INVISIBLE.sub("", text), lines


def any_line_between(lines: list[int], first: int, last: int) -> bool:
    """Whether the ascending `lines` hold one from `first` to `last` (both included)."""
    index = bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last


# Numbers: the one rule every reader reads a count with (board, tricks, claim, DD cells).
INT8_MAX = 2**7 - 1  # the largest value of an int8 column (tricks, claim, dd_tricks)
INT32_MAX = 2**31 - 1  # of an int32 column (board)


def parse_count(text: str, largest: int, field_name: str, what: str) -> int:
    """The number `text` writes in ASCII digits (blanks around it allowed); UNKNOWN_VALUE naming
    `field_name` when it is not `what` ("a board number") or is above `largest`, its column's
    largest value. str.isdigit() takes '²' (which int() refuses) and int() takes other scripts'
    digits ('٣'); a number too large for its column would stop the writing of the whole file."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()):
        raise RecordError(Reason.UNKNOWN_VALUE, f"{text[:40]!r} is not {what} (ASCII digits)", field_name)
    value = int(digits) if len(digits) <= 20 else largest + 1
    if value > largest:
        raise RecordError(Reason.UNKNOWN_VALUE, f"{digits[:40]} is above {largest}, the largest {what}", field_name)
    return value
