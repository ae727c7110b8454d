"""Bidding problems scored by Facit (docs/conventions.md, "Bidding problems (Facit)"): the award tables of
BEN's Challenges files, the robots' Results files, and BEN's rule for scoring a final contract.

A table is a tuple of `Award`s in the file's order, each contract normalised upper case as an
optional declarer letter, level, strain `C D H S N` and an optional `X`/`XX` (`4S`, `N6N`,
`E5CX`). Entries with a `P` suffix (`E2HP`) are kept but never match. A bare `P` entry is the award
for passing the board out (`PASSED_OUT`).

Decisions where the files are loose:

* One reader: a problem file is read by the ingest's PBN reader (`pbn.parse_pbn`, then
  `validate.check`), so `read_problems` and the ingest see the same games, tables and scripts;
  this module parses what the PBN reader hands it (`table_words`, `parse_table`, `parse_script`).
  Games are split as that reader splits them (problems with no empty line between them too).
* A problem file writes its pairs contract first (`{2S 10 3S 6}`) or points first (`{10 4H 7 3H}`,
  BW2), one order per file: the first word of the file's first table says which, as BEN decides.
* A problem's table is the first `{...}` comment after its `[Scoring "Facit"]` tag that is empty or
  starts with a word a table can start with (a contract, `P`/`pass` or a whole number). A comment
  still open when a tag line comes is ended by that line, as BEN's reader ends a table at the
  next line starting with `[` (oct13_feb23_nov23_jun24 board 10 never closes its `{`; without the
  rule it would swallow board 11).
* A problem that cannot be read is skipped and listed (`Skipped`: file, board, reason) and never
  stops the file or the run; a file with no problem at all (no award table, or empty) is a
  warning. Typos whose meaning is clear are repaired and named (`record.Repair`, in
  `Problem.repairs`): `[Scoring "facit"]` in any case; no `[Scoring]` tag, where a comment right
  after `[Deal]` reads whole as a table and the game has no auction played (an [Auction] without
  an `AC`); a `{note}` before the table; a table closed by `]`; `3NT`/`4nt` for `3N`/`4N`; `pass`
  for `P`. The rest is skipped: an odd number of words (which
  one is missing is not clear), an unknown word, points that are not ASCII digits, a deal short of
  four hands (a `-` hand next to three known ones is the 13 cards they lack, as the PBN reader
  reads any deal), no board number, dealer or vulnerability, a board number given twice.
* A Results file carries its own `Score Table:` (suit letters escaped `\\c \\d \\h \\s`, lines
  ended by a literal `\\n`, contract first), the final contract in [Contract]/[Declarer] and the
  points BEN gave it in a `Facit Score:` line. Its Score Table is a comment the PBN reader does not
  keep, so `read_results` splits games itself; a board it cannot read is skipped and listed, as a
  problem is.
* A problem's `[Auction "X"]` section is its script: the calls of the problem, our side's
  places to call marked `AC` (BEN's convention; `AP` is three passes, `=1=` notes, `$n` NAGs and
  `!`/`?` suffixes are dropped, `*` or `+` ends it, as in any PBN auction). It may hold our side's
  own calls (`1C 2S AC P`) and go on after an `AC`. A script is kept from the dealer's seat
  (`Problem.script`). The section's seat starts it when every `AC` then falls on N/S; else the
  dealer does (BW2 boards 8 and 38 name W for a script dealt by N); seats of the opponents
  between the dealer and a later start pass (oct13_feb23_nov23_jun24 board 4: dealer W, script
  from N). A script fitting neither is an error, and so is one that ends the auction before our
  side has a call of its own (its calls before the first `AC`, or those of a script without one
  and the opponents' passes after it, pass the board out or end it after a bid): the board would
  be no problem for the bidder.
* Games (of a Results file) are separated by empty lines outside comments, and a [Board] tag at
  the start of a line in a game that has one starts the next game; `%` lines are ignored (BEN's
  exports glue a game's [Event] tag onto a `%` line); a tag keeps its first value, its name read
  in any case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from . import pbn, validate  # pbn imports this module too; each uses the other's names only when called
from .auction import AuctionState
from .encodings import PASS, SEATS, call_name, deal_to_pbn, parse_call, parse_pbn_hand
from .errors import InputError
from .record import BoardRecord, Repair
from .text import INT32_MAX, parse_count

FACIT = "Facit"  # the [Scoring] value of a problem file's boards
PASSED_OUT = "P"  # a table's award for passing the board out
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
# would never match it (parse_table repairs it, naming the repair).
_CONTRACT = re.compile(r"([NESW]?)([1-7])([CDHSN])(XX|X|P)?")
_NT_TYPO = re.compile(r"([NESW]?[1-7])NT(XX|X|P)?")
_PASS_TYPO = "PASS"
_POINTS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class Award:
    """One table entry: a normalised contract and the points it earns."""
    contract: str
    points: int

    @property
    def matchable(self) -> bool:
        """False for a `P` suffix (`E2HP`) and the bare `P`: BEN compares entries with contracts, which
        never end in P (`award_points` scores the bare `P` on a passed-out board)."""
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
    repairs: tuple[str, ...] = ()  # `record.Repair` values of the typos repaired in its game


@dataclass(frozen=True)
class Skipped:
    """A board of a file that could not be read: its number (None when that is what is missing
    or unreadable), the line its game starts on and why."""
    board: int | None
    line: int
    reason: str


@dataclass
class ProblemFile:
    """What `read_problems` read of a file: its problems, the boards skipped, and a warning when
    it holds no problem at all (empty, unreadable or without award tables)."""
    path: Path
    problems: list[Problem]
    skipped: list[Skipped]
    warning: str | None = None


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
    repairs: tuple[str, ...] = ()  # `record.Repair` values of the typos repaired in its Score Table


@dataclass
class ResultsFile:
    """What `read_results` read of a Results file: its boards and the boards skipped."""
    path: Path
    boards: list[RobotBoard]
    skipped: list[Skipped]


def seat_hands(deal: str) -> list[list[int]]:
    """A [Deal] text ('W:hand hand hand hand') -> the card indices of N, E, S, W; ValueError when
    it does not start with a seat or a hand holds a character that is not a rank."""
    first, _, text = deal.partition(":")
    if first.strip().upper() not in tuple(SEATS):
        raise ValueError(f"{first!r} is not a seat")
    start = SEATS.index(first.strip().upper())
    hands = [[] for _ in range(4)]
    for offset, hand in enumerate(text.split()):
        hands[(start + offset) % 4] = parse_pbn_hand(hand)
    return hands


def normalise_contract(text: str) -> str:
    """'s6n' -> 'S6N', 'e3cx' -> 'E3CX', 'p' -> 'P'; ValueError when `text` is not a table's contract."""
    if text.strip().upper() == PASSED_OUT:
        return PASSED_OUT
    match = _CONTRACT.fullmatch(text.strip().upper())
    if match is None:
        raise ValueError(f"not a contract: {text!r}")
    declarer, level, strain, suffix = match.groups()
    return f"{declarer}{level}{strain}{suffix or ''}"


def award_points(table: Table, level: int, strain: int | None, doubled: int | None, declarer: int | None) -> int:
    """BEN's points for a final contract: the value of the first entry, in table order, that names
    the contract or (undoubled only) one of its ADJUSTMENTS, with the declarer's letter or none.
    An adjustment listed before the exact contract wins (1N on `{2N 10 1N 8}` scores 10). A
    passed-out board (level 0) scores the first `P` entry (BEN cannot score one). Nothing matched
    scores 0."""
    if level == 0:
        return next((award.points for award in table if award.contract == PASSED_OUT), 0)
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


def parse_table(words: Sequence[str], points_first: bool, repairs: list[Repair] | None = None) -> Table:
    """A table from its words in file order; ValueError naming the word at fault. `3NT` and `pass`
    are read as `3N` and `P` (module docstring), each repair added once to `repairs`."""
    if len(words) % 2:
        raise ValueError(f"{len(words)} words, not (contract, points) pairs: {' '.join(words)!r}")
    pairs = zip(words[1::2], words[::2]) if points_first else zip(words[::2], words[1::2])
    table = []
    for contract, points in pairs:
        if not _POINTS.fullmatch(points):
            raise ValueError(f"points {points!r} for {contract!r} are not a whole number")
        value = parse_count(points, INT32_MAX, "award_table", "a number of points")  # the column is int32
        upper = contract.strip().upper()
        if _NT_TYPO.fullmatch(upper):
            upper = _NT_TYPO.sub(r"\1N\2", upper)
            _name(repairs, Repair.FACIT_NT_IN_TABLE)
        elif upper == _PASS_TYPO:
            upper = PASSED_OUT
            _name(repairs, Repair.FACIT_PASS_IN_TABLE)
        table.append(Award(normalise_contract(upper), value))
    return tuple(table)


def _name(repairs: list[Repair] | None, repair: Repair) -> None:
    """Add `repair` to `repairs` (when a list is given), once."""
    if repairs is not None and repair not in repairs:
        repairs.append(repair)


def is_points_first(first_table_words: Sequence[str]) -> bool:
    """A file's pair order from the words of its first non-empty table, as BEN decides: points
    first when the first word is a whole number (`{10 4H 7 3H}`), else contract first."""
    return bool(first_table_words) and bool(_POINTS.fullmatch(first_table_words[0]))


def table_words(comments: Sequence[str], repairs: list[Repair] | None = None) -> list[str] | None:
    """The words of a game's award table from the texts of the comments after its [Scoring] tag
    (module docstring: which one; `repairs` gets the note and bracket repairs), None when none
    holds a table."""
    for index, text in enumerate(comments):
        words = text.split()
        if words and not _can_open_table(words[0]):
            continue
        if index:
            _name(repairs, Repair.FACIT_NOTE_BEFORE_TABLE)
        if "]" in text:  # a `]` typed for its `}`: the table ends there
            words = text[:text.index("]")].split()
            _name(repairs, Repair.FACIT_TABLE_CLOSED_BY_BRACKET)
        return words
    return None


def _can_open_table(word: str) -> bool:
    upper = word.upper()
    return (bool(_POINTS.fullmatch(word)) or upper == _PASS_TYPO or bool(_NT_TYPO.fullmatch(upper))
            or bool(_CONTRACT.fullmatch(upper)) or upper == PASSED_OUT)


def read_problems(path: str | Path) -> ProblemFile:
    """Every problem of a Challenges file, read by the ingest's PBN reader (module docstring);
    the boards that cannot be read are skipped, each with its reason. Never raises for the file's
    content."""
    path = Path(path)
    if not path.is_file():  # a FIFO or a device would never end
        return ProblemFile(path, [], [], "not a regular file: not read")
    try:
        data = path.read_bytes()
    except OSError as error:
        return ProblemFile(path, [], [], f"cannot read: {error.strerror}")
    problems: list[Problem] = []
    skipped: list[Skipped] = []
    lines: dict[int, int] = {}  # board -> the line of the game that gave it
    games = 0
    for item in pbn.parse_pbn(data, str(path)):
        games += 1
        record = validate.check(item) if isinstance(item, BoardRecord) else item
        if not isinstance(record, BoardRecord):
            skipped.append(Skipped(_board_of(record.raw_text), record.source_line,
                                   f"{record.field}: {record.message}"))
            continue
        why = _not_a_problem(record, lines)
        if why is not None:
            skipped.append(Skipped(record.board, record.source_line, why))
            continue
        lines[record.board] = record.source_line
        table = tuple(Award(contract, points) for contract, points in record.award_table)
        script = tuple(OUR_CALL if call == OUR_CALL_INDEX else call_name(call) for call in record.problem_script or ())
        deal = deal_to_pbn(record.owner, _deal_start(record.raw_text))
        problems.append(Problem(record.board, deal, table, record.dealer, record.vulnerability, script,
                                tuple(repair.value for repair in record.repairs)))
    warning = None
    if not games:
        warning = "empty: no game"
    elif not problems and all(item.reason == _NO_TABLE for item in skipped):
        warning, skipped = f"no problem: none of its {games} games has a Facit award table", []
    elif not problems:
        warning = f"no problem: none of its {games} games could be read"
    return ProblemFile(path, problems, skipped, warning)


_NO_TABLE = "no Facit award table ([Scoring \"Facit\"] and a {...} after it)"
_BOARD_TAG = re.compile(r'\[\s*board\s+"\s*([0-9]+)\s*"', re.I)
_DEAL_START = re.compile(r'\[\s*deal\s+"\s*([NESW])\s*:', re.I)


def _not_a_problem(record: BoardRecord, lines: dict[int, int]) -> str | None:
    """Why an accepted record is not a problem that can be bid (None when it is one); `lines`
    holds the boards already read."""
    if record.award_table is None:
        return _NO_TABLE
    if record.board is None:
        return "no [Board] number"
    if record.board in lines:
        return f"board {record.board} again (first at line {lines[record.board]})"
    if record.dealer is None or record.vulnerability is None:
        return "no [Dealer]" if record.dealer is None else "no [Vulnerable]"
    if not validate.is_complete(record.owner):
        return "Deal: not four hands of 13 cards"
    return None


def _board_of(raw_text: str) -> int | None:
    """The board number a game that could not be read names, if it names one."""
    match = _BOARD_TAG.search(raw_text)
    return int(match.group(1)) if match else None


def _deal_start(raw_text: str) -> int:
    """The seat a game's [Deal] starts with (N if none), so a problem's deal reads as the file wrote it."""
    match = _DEAL_START.search(raw_text)
    return SEATS.index(match.group(1).upper()) if match else 0


def parse_script(section: Sequence[str], named: int, dealer: int) -> tuple[str, ...]:
    """A problem's script from its [Auction] section (its lines or words) and the seat the tag
    names: the calls from the dealer's seat on (module docstring: which seat starts them, and
    the marks dropped). The PBN reader of the ingest reads scripts here. ValueError naming the
    word or seat at fault, or saying that the script leaves our side no call."""
    calls = []
    for word in _SCRIPT_MARKS.sub(" ", " ".join(section)).upper().split():
        if word in _SCRIPT_ENDS:
            break
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
            script = ("P",) * lead + tuple(calls)
            _check_our_side_calls(script, dealer)
            return script
    raise ValueError(f"an {OUR_CALL} falls on East or West whether the calls start at {SEATS[named]} or at the "
                     f"dealer {SEATS[dealer]}")


# Dropped from a script: note references (=1=, or =1 glued to a call), NAGs, !/? suffixes.
_SCRIPT_MARKS = re.compile(r"=\d+=?|\$\d+|[!?]+")
_SCRIPT_ENDS = ("*", "+")


def _check_our_side_calls(script: Sequence[str], dealer: int) -> None:
    """ValueError when the auction ends before our side has a call of its own: the script's calls
    before its first `AC`, and after a script without one the opponents' passes, end it. They are
    made as the challenge makes them: an opponent's illegal call is Pass, an illegal call of ours
    is the bidder's (so our side calls)."""
    state = AuctionState.start(dealer)
    scripted = (parse_call(name) if name != OUR_CALL else None for name in script)
    while not state.finished:
        call = next(scripted, PASS if state.to_call % 2 else None)  # after the script E/W pass, we bid
        if call is None or (state.to_call % 2 == 0 and not state.is_legal(call)):
            return
        state.add(call if state.is_legal(call) else PASS)
    raise ValueError(f"the auction ends at call {len(state.calls)}, before our side has a call of its own "
                     f"(an {OUR_CALL})")


def script_indices(script: Sequence[str]) -> list[int]:
    """A script's call names as call indices, OUR_CALL_INDEX where our side is to call."""
    return [OUR_CALL_INDEX if call == OUR_CALL else parse_call(call) for call in script]


def read_results(path: str | Path) -> ResultsFile:
    """Every board of a Results file; a board that cannot be read is skipped with its reason.
    InputError only when the file cannot be read at all."""
    path = Path(path)
    boards, skipped = [], []
    for game in _games(_text(path)):
        try:
            boards.append(_robot_board(game))
        except ValueError as error:
            skipped.append(Skipped(game.board_number(), game.line, str(error)))
    return ResultsFile(path, boards, skipped)


def _robot_board(game: _Game) -> RobotBoard:
    """A Results game's board; ValueError naming the field at fault."""
    comment = next((text for _, text in game.comments if "Score Table:" in text), None)
    facit = re.search(r"Facit Score:\s*(\d+)", comment or "")
    running = re.search(r"Running Score:\s*(\d+)", comment or "")
    if comment is None or facit is None or running is None:
        raise ValueError("no comment with a Score Table:, a Facit Score: and a Running Score:")
    words = _unescape(comment.split("Score Table:", 1)[1].split("Facit Score:", 1)[0]).split()
    repairs: list[Repair] = []
    try:
        table = parse_table(words, points_first=False, repairs=repairs)
    except ValueError as error:
        raise ValueError(f"Score Table: {error}") from None
    board = game.board_number()
    if board is None:
        raise ValueError(f"Board {game.tags.get('Board', '')!r} is not a board number")
    deal = game.tags.get("Deal", "")
    try:
        hands = seat_hands(deal)
    except ValueError as error:
        raise ValueError(f"Deal {deal!r}: {error}") from None
    if [len(hand) for hand in hands] != [13] * 4 or len({card for hand in hands for card in hand}) != 52:
        raise ValueError(f"Deal {deal!r}: not four hands of 13 different cards")
    return RobotBoard(board, game.tags.get("Deal", ""), *_final_contract(game), table, int(facit.group(1)),
                      int(running.group(1)), _auction(game), tuple(repair.value for repair in repairs))


def _auction(game: _Game) -> tuple[str, ...]:
    """A Results file's [Auction] calls; they start at the dealer, where one is named (every shipped
    file names it). A note may lack its closing `=` (`5C=1`, BW-Result8663)."""
    if "Auction" not in game.tags:
        return ()
    start = _seat(game.tags["Auction"], "Auction")
    dealer = _seat(game.tags["Dealer"], "Dealer") if "Dealer" in game.tags else start
    if start != dealer:
        raise ValueError(f"Auction {game.tags['Auction']!r}: a Results auction starts at the dealer {SEATS[dealer]}")
    calls = []
    for word in _SCRIPT_MARKS.sub(" ", " ".join(game.sections.get("Auction", []))).upper().split():
        if word in _SCRIPT_ENDS:
            break
        try:
            calls += ["P"] * 3 if word == "AP" else [call_name(parse_call(word))]
        except ValueError:
            raise ValueError(f"Auction: {word!r} is not a call") from None
    return tuple(calls)


def _seat(text: str, field_name: str) -> int:
    letter = text.strip().upper()
    if len(letter) != 1 or letter not in SEATS:
        raise ValueError(f"{field_name} {text!r} is not a seat")
    return SEATS.index(letter)


def _final_contract(game: _Game) -> tuple[int, int | None, int | None, int | None]:
    """(level, strain, doubled, declarer) from [Contract] and [Declarer]; level 0 when passed out."""
    contract = game.tags.get("Contract", "").strip().upper()
    if contract in ("PASS", "P"):
        return 0, None, None, None
    declarer = game.tags.get("Declarer", "").strip().upper()
    match = _CONTRACT.fullmatch(_NT_TYPO.sub(r"\1N\2", contract))
    if match is None or match.group(1) or match.group(4) == "P":
        raise ValueError(f"Contract {contract!r} is not a contract")
    _, level, strain, suffix = match.groups()
    return int(level), STRAIN_LETTERS.index(strain), DOUBLED_SUFFIXES.index(suffix or ""), _seat(declarer, "Declarer")


def _unescape(text: str) -> str:
    """BEN's Score Table text: `\\s` -> S (and c, d, h), a literal `\\n` -> a space."""
    return re.sub(r"\\([cdhsn])", lambda escape: " " if escape.group(1) == "n" else escape.group(1).upper(), text)


def _text(path: Path) -> str:
    if not path.is_file():  # a FIFO or a device would never end
        raise InputError(f"{path}: not a regular file")
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
    tags: dict[str, str] = field(default_factory=dict)  # name (first letter upper, the rest lower) -> value
    comments: list[tuple[str | None, str]] = field(default_factory=list)  # (the tag before it, text)
    sections: dict[str, list[str]] = field(default_factory=dict)  # tag -> the lines of text after it
    last_tag: str | None = None

    def board_number(self) -> int | None:
        text = self.tags.get("Board", "").strip()
        return int(text) if _POINTS.fullmatch(text) else None

    def read(self, line: str) -> str | None:
        """Take the tags, comments and section text (calls, cards: kept under the tag before it)
        of a line outside a comment; the text of a comment it opens and leaves open, else None."""
        while line.strip():
            tag = _TAG.match(line)
            if tag:
                name, value = tag.groups()
                name = name[:1].upper() + name[1:].lower()
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


def _games(text: str) -> Iterator[_Game]:
    """The games of a Results file in order, with their tags and comments."""
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
        tag = _TAG.match(line)
        if game is not None and tag and tag.group(1).lower() == "board" and "Board" in game.tags:
            yield game  # no empty line before the next game
            game = None
        game = game or _Game(number)
        opened = game.read(line)
        comment = None if opened is None else [opened]
    if comment is not None:
        game.comments.append((game.last_tag, "\n".join(comment)))
    if game is not None:
        yield game
