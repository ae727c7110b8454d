"""One way to read a stage's parameters: defaults, then the stage's section of params.yaml (when
the file exists), then `--set key=value` overrides (values parsed as YAML). Unknown keys and
values of the wrong type are errors, so a typo never trains with a default silently."""

from __future__ import annotations

from dataclasses import MISSING, fields
from pathlib import Path
from typing import Iterable, Sequence

import yaml


def read_section(params: str | Path | None, section: str, overrides: Sequence[str], known: Iterable[str]) -> dict:
    """The section's values and the overrides, as given (no defaults filled in)."""
    values = {}
    if params is not None and Path(params).exists():
        values = dict((yaml.safe_load(Path(params).read_text()) or {}).get(section) or {})
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--set wants key=value, not {item!r}")
        values[key.strip()] = yaml.safe_load(text)
    known = set(known)
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"unknown {section} params: {sorted(unknown)} (known: {sorted(known)})")
    return values


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_section(cls, params: str | Path | None, section: str, overrides: Sequence[str], any_type: tuple[str, ...] = ()):
    """A config dataclass `cls` from its defaults, the params file and the overrides. Ints, and
    strings such as 3e-4 (YAML 1.1 reads a float without a dot as a string), are accepted for
    float fields; fields named in `any_type` skip the type check."""
    defaults = {f.name: f.default_factory() if f.default is MISSING else f.default for f in fields(cls)}
    values = read_section(params, section, overrides, defaults)
    for key, value in values.items():
        default = defaults[key]
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            values[key] = float(value)
        elif isinstance(default, float) and isinstance(value, str) and _is_float(value):
            values[key] = float(value)
        elif key not in any_type and type(value) is not type(default):
            raise ValueError(f"{section}.{key} = {value!r}: expected {type(default).__name__}")
    return cls(**values)
