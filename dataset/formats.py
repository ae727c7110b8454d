"""Which parser reads which file: by extension, with OpenSpiel `.txt` files read line by line
(lines that are not trajectories are quarantined as unknown_format, never guessed)."""

from __future__ import annotations

from typing import Callable, Iterator

from .record import BoardRecord, Rejected

Parser = Callable[[bytes, str], Iterator[BoardRecord | Rejected]]

FORMAT_BY_SUFFIX = {".pbn": "pbn", ".lin": "lin", ".txt": "openspiel"}


def format_of(path: str) -> str | None:
    """'pbn' | 'lin' | 'openspiel', or None for a file no parser reads."""
    lower = path.lower()
    for suffix, name in FORMAT_BY_SUFFIX.items():
        if lower.endswith(suffix):
            return name
    return None


def parser_for(format_name: str) -> Parser:
    if format_name == "pbn":
        from .pbn import parse_pbn

        return parse_pbn
    if format_name == "lin":
        from .lin import parse_lin

        return parse_lin
    if format_name == "openspiel":
        from .openspiel import parse_openspiel

        return parse_openspiel
    raise ValueError(f"no parser for format {format_name!r}")


LINE_BASED_FORMATS = {"openspiel"}  # one record per line: large files may be split into line ranges
