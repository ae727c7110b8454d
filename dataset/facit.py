"""Bidding problems scored by Facit (DESIGN.md "Bidding problems (Facit)"): the award tables of
BEN's Challenges files, the robots' Results files, and BEN's rule for scoring a final contract.

A table is a tuple of `Award`s in the file's order, each contract normalised upper case as an
optional declarer letter, level, strain `C D H S N` and an optional `X`/`XX` (`4S`, `N6N`,
`E5CX`). Entries with a `P` suffix (`E2HP`) are kept but never match.

Decisions where the files are loose:

* A problem file writes its pairs contract first (`{2S 10 3S 6}`) or points first (`{10 4H 7 3H}`,
  BW2), one order per file: the first word of the file's first table says which, as BEN decides.
* A problem's table is the first `{...}` comment after its `[Scoring "Facit"]` tag. A comment
  still open when a tag line comes is ended by that line, as BEN's reader ends a table at the
  next line starting with `[` (oct13_feb23_nov23_jun24 board 10 never closes its `{`; without the
  rule it would swallow board 11).
* A Results file carries its own `Score Table:` (suit letters escaped `\\c \\d \\h \\s`, lines
  ended by a literal `\\n`, contract first), the final contract in [Contract]/[Declarer] and the
  points BEN gave it in a `Facit Score:` line.
* A problem's `[Auction "X"]` section is its script: the calls of the problem, our side's
  places to call marked `AC` (BEN's convention; `AP` is three passes, `=1=` notes are dropped).
  It may hold our side's own calls (`1C 2S AC P`) and go on after an `AC`. A script is kept
  from the dealer's seat (`Problem.script`). The section's seat starts it when every `AC` then
  falls on N/S; else the dealer does (BW2 boards 8 and 38 name W for a script dealt by N);
  seats of the opponents between the dealer and a later start pass (oct13_feb23_nov23_jun24
  board 4: dealer W, script from N). A script fitting neither is an error.
* Games are separated by empty lines outside comments; `%` lines are ignored (BEN's exports glue
  a game's [Event] tag onto a `%` line); a tag keeps its first value. Two [Board] tags in one game
  are an error, never a merge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from .encodings import SEATS, call_name, parse_call, parse_vulnerability
from .errors import InputError

FACIT = "Facit"  # the [Scoring] value of a problem file's boards
STRAIN_LETTERS = "CDHSN"  # the table's strain letters, in the encodings' strain order (N = NT)
DOUBLED_SUFFIXES = ("", "X", "XX")
OUR_CALL = "AC"  # a script's place where our side (N/S) is to call
OUR_CALL_INDEX = -1  # OUR_CALL in a script of call indices (schema.RECORDS `problem_script`)

# BEN's same-strain adjustments, copied as data from its --facit scoring (`contract_adjustments`
# in lorserker/ben src/game.py, commit 7c2c558, GPL-3.0): a final contract named by a key also
# takes the award of an entry naming one of its values, with the same declarer letter or none.
ADJUSTMENTS = {
    "1C": ("2C", "3C", "4C"),
    "1D": ("2D", "3D", "4D"),
    "1H": ("2H", "3H"),
    "1S": ("2S", "3S"),
    "1N": ("2N",),
    "2C": ("3C", "4C"),
    "2D": ("3D", "4D"),
    "2H": ("3H",),
    "2S": ("3S",),
    "3C": ("4C",),
    "3D": ("4D",),
    "3N": ("4N", "5N"),
    "4H": ("5H",),
    "4S": ("5S",),
    "4N": ("5N",),
}

# Declarer letter, level, strain, then X, XX or the never-matching P. `NT` is not read as N: BEN
# would never match it.
_CONTRACT = re.compile(r"([NESW]?)([1-7])([CDHSN])(XX|X|P)?")


@dataclass(frozen=True)
class Award:
    """One table entry: a normalised contract and the points it earns."""
    contract: str
    points: int

    @property
    def matchable(self) -> bool:
        """False for a `P` suffix (`E2HP`): BEN compares entries with contracts, which never end in P."""
        return not self.contract.endswith("P")


Table = tuple[Award, ...]


@dataclass(frozen=True)
class Problem:
    """A board of a Challenges file: its number, [Deal] text, award table, dealer and
    vulnerability (seat and VUL indices of `encodings`) and its script: the calls from the
    dealer's seat on (`call_name`s, `OUR_CALL` where our side is to call), empty when the
    problem is uncontested."""
    board: int
    deal: str
    table: Table
    dealer: int
    vulnerability: int
    script: tuple[str, ...]


@dataclass(frozen=True)
class RobotBoard:
    """A board of a Results file: the final contract a robot reached (level 0 = passed out; strain,
    doubled and declarer as in `record.BoardRecord`), the Score Table embedded in its comment, the
    points the file says BEN's scoring gave it and the file's total so far, and the auction
    (`call_name`s from the dealer on; its notes, `=1=`, dropped)."""
    board: int
    deal: str
    level: int
    strain: int | None
    doubled: int | None
    declarer: int | None
    table: Table
    facit_score: int
    running_score: int
    auction: tuple[str, ...] = ()


def normalise_contract(text: str) -> str:
    """'s6n' -> 'S6N', 'e3cx' -> 'E3CX'; ValueError when `text` is not a table's contract."""
    match = _CONTRACT.fullmatch(text.strip().upper())
    if match is None:
        raise ValueError(f"not a contract: {text!r}")
    declarer, level, strain, suffix = match.groups()
    return f"{declarer}{level}{strain}{suffix or ''}"


def award_points(table: Table, level: int, strain: int | None, doubled: int | None, declarer: int | None) -> int:
    """BEN's points for a final contract: the value of the first entry, in table order, that names
    the contract or (undoubled only) one of its ADJUSTMENTS, with the declarer's letter or none.
    An adjustment listed before the exact contract wins (1N on `{2N 10 1N 8}` scores 10). Nothing
    matched, or a passed-out board (level 0, which no table names), scores 0."""
    if level == 0:
        return 0
    played = f"{level}{STRAIN_LETTERS[strain]}{DOUBLED_SUFFIXES[doubled]}"
    allowed = (played, *ADJUSTMENTS.get(played, ()))
    names = {*allowed, *(SEATS[declarer] + name for name in allowed)}
    return next((award.points for award in table if award.matchable and award.contract in names), 0)


def top_points(table: Table) -> int:
    """The board's best award (0 for an empty table)."""
    return max((award.points for award in table), default=0)


def percent(points: Sequence[int], tables: Sequence[Table]) -> float:
    """Points scored as a percentage of the sum of each board's top award."""
    best = sum(top_points(table) for table in tables)
    return 100.0 * sum(points) / best if best else 0.0


def parse_table(words: Sequence[str], points_first: bool) -> Table:
    """A table from its words in file order; ValueError naming the word at fault."""
    if len(words) % 2:
        raise ValueError(f"{len(words)} words, not (contract, points) pairs: {' '.join(words)!r}")
    pairs = zip(words[1::2], words[::2]) if points_first else zip(words[::2], words[1::2])
    table = []
    for contract, points in pairs:
        if not points.isdigit():
            raise ValueError(f"points {points!r} for {contract!r} are not a whole number")
        table.append(Award(normalise_contract(contract), int(points)))
    return tuple(table)


def is_points_first(first_table_words: Sequence[str]) -> bool:
    """A file's pair order from the words of its first non-empty table, as BEN decides: points
    first when the first word is a whole number (`{10 4H 7 3H}`), else contract first."""
    return bool(first_table_words) and first_table_words[0].isdigit()


def read_problems(path: str | Path) -> list[Problem]:
    """Every board of a Challenges file, with its table; InputError naming file, board and field."""
    path = Path(path)
    games = list(_games(_text(path), path))
    tables = [(game, game.comment_after("Scoring")) for game in games]
    points_first = is_points_first(next((text.split() for _, text in tables if text and text.split()), []))
    problems = []
    for game, text in tables:
        where = game.where(path)
        if game.tags.get("Scoring") != FACIT or text is None:
            raise InputError(f"{where}: no Facit award table ([Scoring \"Facit\"] and a {{...}} after it)")
        try:
            table = parse_table(text.split(), points_first)
        except ValueError as error:
            raise InputError(f"{where}: award table: {error}") from None
        dealer = _seat(game.tags.get("Dealer", ""), f"{where}: Dealer")
        try:
            vulnerability = parse_vulnerability(game.tags.get("Vulnerable", ""))
        except ValueError as error:
            raise InputError(f"{where}: Vulnerable: {error}") from None
        script = ()
        if "Auction" in game.tags:
            named = _seat(game.tags["Auction"], f"{where}: Auction")
            try:
                script = parse_script(game.sections.get("Auction", []), named, dealer)
            except ValueError as error:
                raise InputError(f"{where}: Auction: {error}") from None
        problems.append(Problem(game.board(path), game.tags.get("Deal", ""), table, dealer, vulnerability, script))
    return problems


def _seat(text: str, where: str) -> int:
    letter = text.strip().upper()
    if len(letter) != 1 or letter not in SEATS:
        raise InputError(f"{where} {text!r} is not a seat")
    return SEATS.index(letter)


def parse_script(section: Sequence[str], named: int, dealer: int) -> tuple[str, ...]:
    """A problem's script from its [Auction] section (its lines or words) and the seat the tag
    names: the calls from the dealer's seat on (module docstring: which seat starts them). The PBN
    reader of the ingest and `read_problems` both read scripts here. ValueError naming the word or
    seat at fault."""
    words = re.sub(r"=\d+=", " ", " ".join(section)).upper().split()
    calls = []
    for word in words:
        if word in (OUR_CALL, "AP"):
            calls += [word] if word == OUR_CALL else ["P"] * 3
            continue
        try:
            calls.append(call_name(parse_call(word)))
        except ValueError:
            raise ValueError(f"{word!r} is neither a call nor {OUR_CALL}") from None
    for start in dict.fromkeys((named, dealer)):
        lead = (start - dealer) % 4  # seats before the script starts, from the dealer's
        fits = all((start + index) % 2 == 0 for index, call in enumerate(calls) if call == OUR_CALL)
        if fits and all((dealer + seat) % 2 == 1 for seat in range(lead)):
            return ("P",) * lead + tuple(calls)
    raise ValueError(f"an {OUR_CALL} falls on East or West whether the calls start at {SEATS[named]} or at the "
                     f"dealer {SEATS[dealer]}")


def script_indices(script: Sequence[str]) -> list[int]:
    """A script's call names as call indices, OUR_CALL_INDEX where our side is to call."""
    return [OUR_CALL_INDEX if call == OUR_CALL else parse_call(call) for call in script]


def read_results(path: str | Path) -> list[RobotBoard]:
    """Every board of a Results file; InputError naming file, board and field."""
    path = Path(path)
    boards = []
    for game in _games(_text(path), path):
        where = game.where(path)
        comment = next((text for _, text in game.comments if "Score Table:" in text), None)
        facit = re.search(r"Facit Score:\s*(\d+)", comment or "")
        running = re.search(r"Running Score:\s*(\d+)", comment or "")
        if comment is None or facit is None or running is None:
            raise InputError(f"{where}: no comment with a Score Table:, a Facit Score: and a Running Score:")
        words = _unescape(comment.split("Score Table:", 1)[1].split("Facit Score:", 1)[0]).split()
        try:
            table = parse_table(words, points_first=False)
        except ValueError as error:
            raise InputError(f"{where}: Score Table: {error}") from None
        boards.append(RobotBoard(game.board(path), game.tags.get("Deal", ""), *_final_contract(game, where),
                                 table, int(facit.group(1)), int(running.group(1)), _auction(game, where)))
    return boards


def _auction(game: _Game, where: str) -> tuple[str, ...]:
    """A Results file's [Auction] calls; they start at the dealer, where one is named (every shipped
    file names it). A note may lack its closing `=` (`5C=1`, BW-Result8663)."""
    if "Auction" not in game.tags:
        return ()
    start = _seat(game.tags["Auction"], f"{where}: Auction")
    dealer = _seat(game.tags["Dealer"], f"{where}: Dealer") if "Dealer" in game.tags else start
    if start != dealer:
        raise InputError(f"{where}: Auction {game.tags['Auction']!r}: a Results auction starts at the dealer "
                         f"{SEATS[dealer]}")
    calls = []
    for word in re.sub(r"=\d+=?", " ", " ".join(game.sections.get("Auction", []))).upper().split():
        try:
            calls += ["P"] * 3 if word == "AP" else [call_name(parse_call(word))]
        except ValueError:
            raise InputError(f"{where}: Auction: {word!r} is not a call") from None
    return tuple(calls)


def _final_contract(game: _Game, where: str) -> tuple[int, int | None, int | None, int | None]:
    """(level, strain, doubled, declarer) from [Contract] and [Declarer]; level 0 when passed out."""
    contract = game.tags.get("Contract", "").strip().upper()
    if contract in ("PASS", "P"):
        return 0, None, None, None
    declarer = game.tags.get("Declarer", "").strip().upper()
    match = _CONTRACT.fullmatch(contract)
    if match is None or match.group(1) or match.group(4) == "P":
        raise InputError(f"{where}: Contract {contract!r} is not a contract")
    if len(declarer) != 1 or declarer not in SEATS:
        raise InputError(f"{where}: Declarer {declarer!r} is not a seat")
    _, level, strain, suffix = match.groups()
    return int(level), STRAIN_LETTERS.index(strain), DOUBLED_SUFFIXES.index(suffix or ""), SEATS.index(declarer)


def _unescape(text: str) -> str:
    """BEN's Score Table text: `\\s` -> S (and c, d, h), a literal `\\n` -> a space."""
    return re.sub(r"\\([cdhsn])", lambda escape: " " if escape.group(1) == "n" else escape.group(1).upper(), text)


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # BridgeComposer's charset=ISO-8859-1


# A tag, with the odd spacing these files use: `[ Auction "E"]`, `[Auction "N" ]`.
_TAG = re.compile(r'\s*\[\s*(\w+)\s+"([^"]*)"\s*\]')


@dataclass
class _Game:
    line: int  # where the game starts, for messages
    tags: dict[str, str] = field(default_factory=dict)
    comments: list[tuple[str | None, str]] = field(default_factory=list)  # (the tag before it, text)
    sections: dict[str, list[str]] = field(default_factory=dict)  # tag -> the lines of text after it
    last_tag: str | None = None
    boards: int = 0  # [Board] tags seen

    def where(self, path: Path) -> str:
        return f"{path}: board {self.tags['Board']}" if "Board" in self.tags else f"{path}: game at line {self.line}"

    def board(self, path: Path) -> int:
        text = self.tags.get("Board", "").strip()
        if not text.isdigit():
            raise InputError(f"{self.where(path)}: Board {text!r} is not a board number")
        return int(text)

    def comment_after(self, tag: str) -> str | None:
        return next((text for before, text in self.comments if before == tag), None)

    def read(self, line: str, number: int, path: Path) -> str | None:
        """Take the tags, comments and section text (calls, cards: kept under the tag before it)
        of a line outside a comment; the text of a comment it opens and leaves open, else None."""
        while line.strip():
            tag = _TAG.match(line)
            if tag:
                name, value = tag.groups()
                self.boards += name == "Board"
                if self.boards > 1:
                    raise InputError(f"{self.where(path)}: a second [Board] tag (line {number}) with no empty "
                                     f"line before it")
                self.tags.setdefault(name, value)
                self.last_tag, line = name, line[tag.end():]
                continue
            start = line.find("{")
            text = line if start < 0 else line[:start]
            if text.strip() and self.last_tag is not None:
                self.sections.setdefault(self.last_tag, []).append(text)
            if start < 0:
                return None
            end = line.find("}", start)
            if end < 0:
                return line[start + 1:]
            self.comments.append((self.last_tag, line[start + 1:end]))
            line = line[end + 1:]
        return None


def _games(text: str, path: Path) -> Iterator[_Game]:
    """The games of a file in order, with their tags and comments."""
    game: _Game | None = None
    comment: list[str] | None = None  # lines of a comment still open
    for number, line in enumerate(text.splitlines(), 1):
        if comment is not None:
            end = line.find("}")
            if end < 0 and not _TAG.match(line):
                comment.append(line)
                continue
            game.comments.append((game.last_tag, "\n".join(comment + [line[:end]] if end >= 0 else comment)))
            comment = None  # ended by "}" or, never closed, by a tag line
            if end >= 0:
                line = line[end + 1:]
                if not line.strip():
                    continue  # the rest of a comment's last line is not an empty line
        if line.startswith("%"):
            continue
        if not line.strip():
            if game is not None:
                yield game
            game = None
            continue
        game = game or _Game(number)
        opened = game.read(line, number, path)
        comment = None if opened is None else [opened]
    if comment is not None:
        game.comments.append((game.last_tag, "\n".join(comment)))
    if game is not None:
        yield game
