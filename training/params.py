"""One way to read a stage's parameters: defaults, then the stage's section of a params file, then
`--set key=value` overrides (values parsed as YAML). Unknown keys, values of the wrong type or out
of range (the config dataclass's __post_init__) and a named params file that is missing are errors,
so a typo never trains with a default silently.

Every verb declares its `--params`/`--set` with `ParamsArguments`, which makes each of these errors
one InputError line (`bridgeflow VERB: error: ...`, exit 2)."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

import yaml

from bridgeflow.dataset.errors import InputError, existing

T = TypeVar("T")
DEFAULT_PARAMS = "params.yaml"  # read when --params is not given and the file exists


def read_section(params: str | Path | None, section: str, overrides: Sequence[str], known: Iterable[str]) -> dict:
    """The section's values and the overrides, as given (no defaults filled in). `params` None:
    the overrides alone; a `params` path that does not exist is an InputError."""
    values = {}
    if params is not None:
        path = existing(params, "params file (--params)")
        try:
            document = yaml.safe_load(path.read_text()) or {}
        except (yaml.YAMLError, UnicodeDecodeError, OSError) as error:
            raise InputError(f"params file (--params) {path}: not readable YAML: {' '.join(str(error).split())}") from None
        if not isinstance(document, dict) or not isinstance(document.get(section) or {}, dict):
            raise InputError(f"params file (--params) {path}: the {section}: section is not a mapping of key: value")
        values = dict(document.get(section) or {})
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--set wants key=value, not {item!r}")
        try:
            values[key.strip()] = yaml.safe_load(text)
        except yaml.YAMLError:
            raise ValueError(f"--set {item!r}: the value is not readable YAML") from None
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


def typed(section: str, values: dict, defaults: Mapping, any_type: tuple[str, ...] = ()) -> dict:
    """`values` checked against the types of `defaults`. Ints, and strings such as 3e-4 (YAML 1.1
    reads a float without a dot as a string), are accepted for float fields; fields named in
    `any_type` skip the check."""
    values = dict(values)
    for key, value in values.items():
        default = defaults[key]
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            values[key] = float(value)
        elif isinstance(default, float) and isinstance(value, str) and _is_float(value):
            values[key] = float(value)
        elif key not in any_type and type(value) is not type(default):
            raise ValueError(f"{section}.{key} = {value!r}: expected {type(default).__name__}")
    return values


def load_section(cls, params: str | Path | None, section: str, overrides: Sequence[str], any_type: tuple[str, ...] = ()):
    """A config dataclass `cls` from its defaults, the params file and the overrides (see `typed`)."""
    defaults = {f.name: f.default_factory() if f.default is MISSING else f.default for f in fields(cls)}
    return cls(**typed(section, read_section(params, section, overrides, defaults), defaults, any_type))


@dataclass(frozen=True)
class Params:
    """The params a verb reads: a params file (None: defaults and overrides only) and its --set
    items, each `SECTION.KEY=VALUE` for one of `sections` or a bare `KEY=VALUE` of section `bare`
    (None: every item names its section)."""

    file: str | Path | None
    sets: Sequence[str]
    sections: Sequence[str]
    bare: str | None

    def overrides(self, section: str) -> list[str]:
        """The --set items of `section`, without their `SECTION.`; InputError for one naming no section."""
        chosen = []
        for item in self.sets:
            head, dot, _ = item.partition("=")[0].partition(".")
            if dot and head in self.sections:
                if head == section:
                    chosen.append(item.partition(".")[2])
            elif self.bare is None:
                raise InputError(f"--set takes {' and '.join(self.sections)} params only "
                                 f"({self.sections[0]}.KEY=VALUE), not {item!r}")
            elif section == self.bare:
                chosen.append(item)
        return chosen

    def load(self, cls, section: str, first: Sequence[str] = (), any_type: tuple[str, ...] = ()):
        """`cls` (a config dataclass) from `section` (load_section), with `first` (overrides the verb
        derives, e.g. selfplay.search) before the --set items."""
        return self.loaded(section, lambda params, overrides: load_section(cls, params, section, [*first, *overrides],
                                                                             any_type))

    def loaded(self, section: str, build: Callable[[str | Path | None, list[str]], T]) -> T:
        """`build(params file, the section's --set items)`, any mistake in them one InputError line
        naming where the values came from."""
        try:
            return build(self.file, self.overrides(section))
        except InputError:
            raise
        except (ValueError, TypeError) as error:
            source = ", ".join(filter(None, [str(self.file or ""), "--set" if self.sets else ""])) or "defaults"
            raise InputError(f"{section} params ({source}): {' '.join(str(error).split())}") from None


class ParamsArguments:
    """Declares a verb's `--params FILE` and `--set [SECTION.]KEY=VALUE` (repeatable) on its parser;
    `parsed` gives the Params they name. Without --params the verb reads `default_file` when it
    exists (None: no file); a --params file that does not exist is an InputError."""

    def __init__(self, parser: argparse.ArgumentParser, sections: Sequence[str], bare: str | None,
                 default_file: str | None = DEFAULT_PARAMS):
        self.sections, self.bare, self.default_file = tuple(sections), bare, default_file
        named = " and ".join(f"`{section}:`" for section in self.sections)
        default = f" (default: {default_file}, when there is one)" if default_file else ""
        parser.add_argument("--params", help=f"YAML file with {named} section(s){default}")
        form = "KEY=VALUE" if bare and len(self.sections) == 1 else "[SECTION.]KEY=VALUE" if bare else "SECTION.KEY=VALUE"
        parser.add_argument("--set", action="append", default=[], metavar=form,
                            help=f"override a param of {', '.join(self.sections)} (repeatable)"
                                 + (f"; a bare KEY is {bare}.KEY" if bare and len(self.sections) > 1 else ""))

    def parsed(self, args: argparse.Namespace) -> Params:
        if args.params is not None:
            file = existing(args.params, "params file (--params)")
        else:
            file = Path(self.default_file) if self.default_file and Path(self.default_file).is_file() else None
        return Params(file, tuple(args.set), self.sections, self.bare)
