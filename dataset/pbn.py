"""PBN (Portable Bridge Notation 1.0-2.1) reader, and where a large file can be cut into pieces.

`parse_pbn` turns the bytes of one file into one `BoardRecord` or `Rejected` per game, in file
order, and never raises for bad input: a bad game is quarantined and the next one is read.
`range_starts` says where a large file can be cut so that its pieces parse as the whole would.
The writer, `format_pbn`, is pbn_writer.py.

The reader only reads syntax and what each tag says; `validate.check` applies the bridge rules
(legal auction, contract matches auction, play possible) afterwards.

Decisions where the standard is silent or real files disagree with it:

* Tag names are matched without regard to case, as the standard's names (`[deal]`, `[BOARD]`
  are [Deal] and [Board]); a name the standard does not define is kept as written.
* Games are separated by empty lines (whitespace-only counts). An empty line inside a `{...}`
  comment does not end the game, unless it is followed (after more empty or `%` lines) by a line
  starting with `[`: then the comment is taken as unterminated (the game is rejected) so that
  one missing `}` cannot swallow the following games. Nor does a comment swallow tags: a line
  that starts with a tag (`[Name "`) ends a comment whose `}` has not come (a `]` typed for it),
  and the game is rejected as holding an unterminated comment; the tags after it are read.
* A chunk holding only comments and `%` lines is not a game. Text before the first tag is a
  syntax error (the chunk is one rejected game). Comments do not nest; a stray `}` (left by a
  nested `{...}` in commentary, as BFC writes) is ignored.
* Never merge two games: a tag other than [Note] that repeats after the game already has its
  `[Deal]` starts a new game there even without an empty line (so in a file without empty lines
  each game keeps its own [Date] and [Site], with or without [Event] and [Board]; a tag the game
  before lacks, written before the first tag they share, stays with the game before). A tag
  repeated before the [Deal] keeps its first value (BBA writes `[Room "Open"]` and
  `[Room "IMP"]` in every game).
* Tag copying: `"#"` takes the tag's value in the latest game that had it (not allowed for
  Dealer, Vulnerable, Deal, Declarer, Contract, Result, Auction, Play, as the PBN verifier
  reports); `"##value"` gives `value` to this game and to every following game that omits the
  tag, until the tag is given again (`"##"` alone shares the latest value).
* A game with neither `[Deal]` nor `[Board]` right after an accepted game with a deal is another
  table's result on that board (rpbridge.net style): it inherits the board tags in `_BOARD_TAGS`.
* Empty and `"?"` values of interpreted tags mean "not given". Text tags keep `"?"` verbatim.
* Numbers ([Board], [Result], OptimumResultTable tricks) are ASCII digits within their column's
  range (`text.parse_count`): `"²"`, `"٣"` or `"3000000000"` is UNKNOWN_VALUE for that game.
* Encoding: UTF-16 or UTF-32 (LE or BE) when a byte order mark says so, else (after a UTF-8 BOM,
  if any) UTF-8 for the whole file when it decodes, else per game UTF-8, cp1250, latin-1. A game
  with control characters (NUL, other C0 codes except tab/CR/LF/FF), or with bytes that are not in
  the encoding its BOM names, is UNDECODABLE_BYTES, with a message that says what was seen (a NUL
  in every other character: UTF-16/32 without a BOM).
* Line ends: LF, CRLF and a lone CR (old Mac files) each end a line.
* A byte order mark inside the file (files concatenated), a zero-width space or a word joiner is
  dropped (`text.drop_invisible`), listed as a repair on the game of its line (or the next game,
  for one between games).
* Auction: the tag value is the seat of the first column; leading `-` pad up to the dealer. The
  first caller is the dealer: a conflicting [Dealer] is rejected, a missing one is inferred.
  `AP` adds the passes that end the auction; `+` and `*` end the section. `!` (alone or as a
  suffix) and `$n` NAGs mark an alert; `=n=` (or `=n` glued to a call, as BBA writes `5C=1`)
  attaches `[Note "n:text"]` as the explanation; other suffixes (`?`, `!!`, `?!` ...) and
  irregularity marks (`^I`, `^S`) are ignored.
* Bidding problems (BEN's Challenges files, DESIGN.md "Bidding problems (Facit)"): the comments
  after `[Scoring "Facit"]` (in any case; after [Deal] in a game with no [Scoring]) hold the
  problem's award table, chosen and read by `facit` (`facit.table_words`, `facit.parse_table`,
  with the repairs named there) in the pair order of the file's first non-empty table; a comment
  there whose `{` never closes ends before the next line that starts with a tag, as BEN reads a
  table (any other unterminated comment rejects its game). A game with a table is a problem: its
  [Auction] section is the problem's script (`facit.parse_script`: `AC` where our side is to
  call), kept apart from `auction`. `facit.read_problems` reads problem files with this reader.
* Declarer `"^X"` (an irregularity: X played the contract its partner won in the auction)
  records the auction's declarer, partner of X. Result `"^n"` is n tricks. A `"0"` with a
  contract and no play is what robot result files write on unplayed boards: `validate.check`
  takes it as unknown unless [Score] agrees.
* Play: the table is read by columns from the [Play] seat. With a known trump (the contract,
  or the auction's contract when [Contract] is absent, passes typed after its end ignored as
  `validate.check` ignores them) it is put in played order: each trick from its leader, the
  winner leading next. `-` is a card not played (the standard's meaning): it stays in its place
  in `play` as NOT_PLAYED, cannot win its trick, and the rest of the play is kept; trailing ones
  (the tricks after a claim) are dropped, and a trick with no card played ends the play (its
  winner, the next leader, is unknown). `+` is a card not yet played: the play ends before it, as
  no later card can have been played. With no known trump the cards are kept in column order.
* Notes after a [Play] section annotate cards and are ignored.
* DD tables: `[DoubleDummyTricks]` (20 hex digits, declarer N,S,E,W, strains NT,S,H,D,C) and
  `[OptimumResultTable]` rows (any subset, e.g. BBA's single row) fill `dd_tricks`; a table
  that cannot be read, or two that disagree, reject the game.
* An end position (every known hand with the same number of cards, under 13) is NOT_A_DEAL.
"""

from __future__ import annotations

import codecs
import re
from typing import Iterable, Iterator

import numpy as np

from . import facit
from .auction import IllegalCall
from .encodings import PASS, SEATS, STRAINS, parse_call, parse_card, parse_pbn_hand, partner
from .record import NOT_PLAYED, BoardRecord, Reason, RecordError, Rejected, Repair, trick_winner
from .text import INT8_MAX, INT32_MAX, any_line_between, bom_encoding, drop_invisible, is_wide, parse_count
from .validate import owner_from_hands, replay_to_end

__all__ = ["parse_pbn", "range_starts", "trump_of", "DDT_CELLS"]

# ---------------------------------------------------------------- lexical structure

# Empty lines between games.
_GAME_BREAK = re.compile(r"\n(?:[ \t\r\f\v]*\n)+")
# Constructs that can hide an empty line or a brace: a game break is an empty line outside them.
_BREAK_SCAN = re.compile(
    r"""
      "[^"\\\n]*(?:\\.[^"\\\n]*)*"?
    | ;[^\n]*
    | (?<![^\n])%[^\n]*
    | \{(?:[^}\n]+|\n(?![ \t\r\f\v]*\n(?:[ \t\r\f\v]*\n|%[^\n]*\n)*[ \t]*\[))*\}?
    | (?P<brk>\n(?:[ \t\r\f\v]*\n)+)
    """,
    re.X,
)
_TOKEN = re.compile(
    r"""
    \s*
    (?:
        (?P<tag>\[\s*(?P<name>[A-Za-z0-9_]+)\s*"(?P<value>[^"\\\n]*(?:\\.[^"\\\n]*)*)"\s*\])
      | (?P<escape>(?<![^\n])%[^\n]*)
      | (?P<comment>\{[^}\n]*(?:\n(?![ \t]*\[\s*[A-Za-z0-9_]+\s*")[^}\n]*)*\}|;[^\n]*|\})
      | (?P<open_comment>\{[^}]*?(?=\n[ \t]*\[\s*[A-Za-z0-9_]+\s*"))
      | (?P<words>[^\s{};\[\]"]+(?:\s+[^\s{};\[\]"%][^\s{};\[\]"]*)*)
      | (?P<string>"[^"\\\n]*(?:\\.[^"\\\n]*)*")
      | (?P<error>\[[^\]\n]*\]?|\{[^}]*|"[^\n]*|\S)
    )
    """,
    re.X,
)
_ERROR_TAG_NAME = re.compile(r"\[\s*([A-Za-z0-9_]*)")
_UNESCAPE = re.compile(r"\\([\\\"])")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# UTF-16/32 byte order marks and the encodings they name (UTF-32-LE's starts with UTF-16-LE's: first).
# A line end: LF, CRs before an LF (CRLF, and CRCRLF of twice-converted files), or a lone CR (old Mac).
_LINE_END = re.compile(r"\r+\n|\r")
# Pieces of a section word: note ref (=n=, or BBA's =n without the closing '='), NAG, suffix
# annotation, irregularity, call/card, stray char.
_PIECE = re.compile(r"=([^=]*)=|=(\d+)|\$(\w*)|([!?]+)|\^(\w?)|([^=!?$^]+)|(.)")

# ---------------------------------------------------------------- tag domains

_NOT_COPYABLE = frozenset({"Dealer", "Vulnerable", "Deal", "Declarer", "Contract", "Result", "Auction", "Play"})
_BOARD_TAGS = ("Event", "Site", "Date", "Stage", "Round", "HomeTeam", "VisitTeam", "Board", "Dealer",
               "Vulnerable", "Deal", "Scoring")
_PLAYER_TAGS = ("North", "East", "South", "West")
_INTERPRETED = frozenset({
    "Event", "Site", "Date", "Board", "Room", "Scoring", *_PLAYER_TAGS, "Dealer", "Vulnerable", "Deal",
    "Declarer", "Contract", "Result", "Score", "Auction", "Play", "Note", "OptimumResultTable",
    "DoubleDummyTricks",
})
_UNKNOWN_TEXT = ("", "?")
_VULNERABILITY = {"none": 0, "love": 0, "-": 0, "ns": 1, "ew": 2, "all": 3, "both": 3}
_STRAIN_OF = {"C": 0, "D": 1, "H": 2, "S": 3, "N": 4, "NT": 4}
_CONTRACT = re.compile(r"([1-7])(NT|[CDHSN])(X{0,2})", re.I)
_RESULT_BY_SIDE = re.compile(r"(NS|EW)\s+(\S+)(?:\s+(NS|EW)\s+(\S+))?", re.I)
# DoubleDummyTricks digit order: declarer N,S,E,W; strains NT,S,H,D,C within each.
DDT_CELLS = tuple(seat * 5 + strain for seat in (0, 2, 1, 3) for strain in (4, 3, 2, 1, 0))
_DD_COLUMNS = {"declarer": "declarer", "denomination": "strain", "suit": "strain", "strain": "strain",
               "denom": "strain", "result": "tricks", "tricks": "tricks"}

# Tag names as the standard spells them (PBN 2.1 sections 3, 4 and 5): a name in another case
# ([deal], [BOARD]) is read as the standard's; other names are kept as written.
_STANDARD_NAMES = frozenset({
    *_INTERPRETED, *_BOARD_TAGS, "Annotator", "AnnotatorNA", "Application", "BidSystemEW", "BidSystemNS",
    "Competition", "DealId", "Description", "EastNA", "EastType", "EventDate", "EventSponsor", "FrenchMP",
    "Generator", "Hidden", "Mode", "NorthNA", "NorthType", "PairEW", "PairNS", "ScoreIMP", "ScoreMP",
    "ScorePercentage", "ScoreRubber", "ScoreRubberHistory", "Section", "SouthNA", "SouthType",
    "Termination", "Time", "TimeCall", "TimeCard", "TimeControl", "UTCDate", "UTCTime", "WestNA",
    "WestType", "OptimumScore", "OptimumPlayTable", "ActionTable", "AuctionTimeTable",
    "InstantScoreTable", "PlayTimeTable", "ScoreTable", "TotalScoreTable",
})
_STANDARD_NAME_OF = {name.lower(): name for name in _STANDARD_NAMES}

_call_cache: dict[str, int] = {}
_holding_cache: dict[tuple[int, str], list[int]] = {}  # (position in S.H.D.C, holding) -> cards
_card_cache: dict[str, int] = {}


# ---------------------------------------------------------------- reading

def parse_pbn(data: bytes, source_file: str, carried_tags: dict | None = None) -> Iterator[BoardRecord | Rejected]:
    """One BoardRecord or Rejected per game, in file order; never raises for bad input.

    `carried_tags`: the '#'/'##' state where `data` starts, for a piece of a file (range_starts)."""
    text, per_game_decoding, damaged_encoding = _decode_file(data)
    text, invisible_lines = drop_invisible(text)
    carried = _CarriedTags()
    if carried_tags:
        carried.latest.update(carried_tags["latest"])
        carried.shared.update(carried_tags["shared"])
        carried.points_first = carried_tags["points_first"]
    position, lines_read = 0, 0
    for chunk, chunk_line in _chunks(text):
        if per_game_decoding:
            # each side of a UTF-8 byte order mark (files concatenated) in its own encoding
            parts = chunk.encode("latin-1").split(codecs.BOM_UTF8)
            chunk, chunk_invisible = drop_invisible("\ufeff".join(_decode_game(part) for part in parts))
            invisible_lines += [chunk_line + line - 1 for line in chunk_invisible]
        # Text is checked per game (the first game with what precedes it in the chunk), so a
        # control character where the empty line between two games was costs one game, not both.
        checked = 0
        for game in _games(chunk):
            problem = _undecodable(chunk[checked:game.end], damaged_encoding)
            if problem is not None:
                yield _undecodable_game(source_file, position, chunk, chunk_line, checked, game.end, problem)
            else:
                record = BoardRecord(
                    source_file=source_file,
                    source_format="pbn",
                    source_position=position,
                    source_line=chunk_line + chunk.count("\n", 0, game.start),
                    raw_text=chunk[game.start:game.end].rstrip(),
                )
                item = _read_game(record, game, carried)
                last_line = record.source_line + record.raw_text.count("\n")
                if invisible_lines and isinstance(item, BoardRecord) and any_line_between(
                        invisible_lines, lines_read + 1, last_line):
                    item.repairs.append(Repair.INVISIBLE_CHARACTER_DROPPED)
                lines_read = last_line
                yield item
            position += 1
            checked = game.end
        if not checked:  # no game: comments only, which must still be text
            problem = _undecodable(chunk, damaged_encoding)
            if problem is not None:
                yield _undecodable_game(source_file, position, chunk, chunk_line, 0, len(chunk), problem)
                position += 1


def _decode_file(data: bytes) -> tuple[str, bool, str | None]:
    """(the file as text with "\\n" line ends, True when it is not UTF-8 and each game must be
    decoded on its own, the UTF-16/32 encoding its byte order mark names when some bytes are not in
    it: each U+FFFD then marks such bytes)."""
    per_game, damaged = False, None
    encoding, mark = bom_encoding(data)
    data = data[mark:]
    if is_wide(encoding):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            text, damaged = data.decode(encoding, errors="replace"), encoding
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            # latin-1 maps bytes 1:1 and the structure is ASCII, so games split the same way.
            text, per_game = data.decode("latin-1"), True
    text = text.rstrip("\x1a")  # DOS end-of-file mark
    if "\r" in text:
        text = _LINE_END.sub("\n", text)
    return text, per_game, damaged


def _undecodable(chunk: str, damaged_encoding: str | None) -> str | None:
    """Why a chunk is not text (what was seen in it), or None when it is."""
    if damaged_encoding is not None and "\ufffd" in chunk:
        return f"bytes that are not {damaged_encoding.upper()}, the encoding the file's byte order mark names"
    control = _CONTROL.search(chunk)
    if control is None:
        return None
    nuls = max(chunk[0::2].count("\x00"), chunk[1::2].count("\x00"))
    if nuls and nuls >= 0.9 * (len(chunk) // 2):  # the zero bytes of UTF-16 or UTF-32 ASCII text
        return "NUL bytes between the characters: UTF-16 or UTF-32 text without a byte order mark"
    line = chunk.count("\n", len(chunk) - len(chunk.lstrip()), control.start()) + 1
    return f"control character {ord(control.group()):#04x} on line {line} of the game: binary data, not text"


def _undecodable_game(source_file: str, position: int, chunk: str, chunk_line: int, start: int, end: int,
                      problem: str) -> Rejected:
    """chunk[start:end], text that is not text (`problem` says why), as one quarantined game."""
    text = chunk[start:end]
    start += len(text) - len(text.lstrip())
    return Rejected(source_file, "pbn", position, chunk_line + chunk.count("\n", 0, start), text.strip(),
                    Reason.UNDECODABLE_BYTES, problem, "game")


def _decode_game(raw: bytes) -> str:
    for encoding in ("utf-8", "cp1250"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            pass
    return raw.decode("latin-1")


def _chunks(text: str) -> Iterator[tuple[str, int]]:
    """Blank-line separated chunks that hold something, with their 1-based first line."""
    if "{" in text:
        breaks = (m.span() for m in _BREAK_SCAN.finditer(text) if m.lastgroup == "brk")
    else:
        breaks = (m.span() for m in _GAME_BREAK.finditer(text))
    start, line = 0, 1
    for break_start, break_end in breaks:
        if text[start:break_start].strip():
            yield text[start:break_start], line
        line += text.count("\n", start, break_end)
        start = break_end
    if text[start:].strip():
        yield text[start:], line


class _Tag:
    """One tag pair and the section words after it (the section runs up to the next tag)."""

    __slots__ = ("name", "value", "words", "end", "section_end")

    def __init__(self, name: str, value: str, end: int, section_end: int):
        self.name, self.value, self.end, self.section_end = name, value, end, section_end
        self.words: list[str] = []

    def section_text(self, chunk: str) -> str:
        return chunk[self.end:self.section_end].strip()


class _Game:
    """The tokens of one game inside a chunk."""

    __slots__ = ("chunk", "start", "end", "tags", "notes", "award_comments", "error")

    def __init__(self, chunk: str, start: int):
        self.chunk, self.start, self.end = chunk, start, len(chunk)
        self.tags: dict[str, _Tag] = {}
        self.notes: list[tuple[str, bool]] = []  # (value, after a Play section)
        # (tag, text) of each comment after [Scoring "Facit"] or [Deal]: where a problem's table may be
        self.award_comments: list[tuple[str, str]] = []
        self.error: RecordError | None = None

    def fail(self, reason: Reason, message: str, field_name: str) -> None:
        if self.error is None:
            self.error = RecordError(reason, message, field_name)


def _games(chunk: str) -> Iterator[_Game]:
    """Tokenize a chunk into games: usually one, more when a game lacks its empty line."""
    game: _Game | None = None
    current: _Tag | None = None
    comment_start: int | None = None  # a comment before the first tag belongs to the game
    for match in _TOKEN.finditer(chunk):
        kind = match.lastgroup
        if kind == "escape":
            continue
        if game is None:
            if kind == "comment":
                comment_start = match.start(kind) if comment_start is None else comment_start
                continue
            game = _Game(chunk, match.start(kind) if comment_start is None else comment_start)
        if kind == "tag":
            name, value = match.group("name", "value")
            if name not in _STANDARD_NAMES:
                name = _STANDARD_NAME_OF.get(name.lower(), name)
            tag_start = match.start(kind)
            if current is not None:
                current.section_end = tag_start
            if name in game.tags and "Deal" in game.tags and name != "Note":
                game.end = tag_start
                yield game
                game = _Game(chunk, tag_start)
            if "\\" in value:
                value = _UNESCAPE.sub(r"\1", value)
            current = _Tag(name, value, match.end(), game.end)
            if name == "Note":
                game.notes.append((value, "Play" in game.tags))
            elif name not in game.tags:
                game.tags[name] = current
        elif kind in ("comment", "open_comment"):
            text = match.group(kind)
            may_be_table = current is not None and text.startswith("{") and (
                (current.name == "Scoring" and current.value.strip().lower() == facit.FACIT.lower())
                or (current.name == "Deal" and kind == "comment"))
            if may_be_table:
                game.award_comments.append((current.name, text[1:].removesuffix("}")))
            elif kind == "open_comment":  # the game is rejected; the tags after it are read on
                game.fail(Reason.SYNTAX, f"unterminated comment on line "
                          f"{chunk.count(chr(10), game.start, match.start(kind)) + 1} of the game",
                          current.name if current is not None else "game")
        elif kind == "words" or kind == "string":
            words = match.group(kind)
            if current is None:
                game.fail(Reason.SYNTAX, f"text {words.split()[0]!r} before the first tag", "game")
            elif kind == "words":
                current.words.extend(words.split())
            else:
                current.words.append(words)
        elif kind == "error":
            token = match.group(kind)
            if token.startswith("["):
                field_name = _ERROR_TAG_NAME.match(token).group(1) or "tag"
                message = f"malformed tag {token.strip()!r} (expected [Name \"value\"])"
            else:
                field_name = current.name if current is not None else "game"
                if token.startswith("{"):
                    message = "unterminated comment"
                elif token.startswith('"'):
                    message = "unterminated string"
                else:
                    message = f"unexpected {token!r}"
                message += f" on line {chunk.count(chr(10), game.start, match.start(kind)) + 1} of the game"
            game.fail(Reason.SYNTAX, message, field_name)
    if game is not None:
        yield game


class _CarriedTags:
    """What flows from one game to the next: '#' copies, '##' sharing, board inheritance, and the
    pair order of the file's award tables (set by its first non-empty one, `facit.is_points_first`)."""

    def __init__(self) -> None:
        self.board: dict[str, str] = {}  # board tags of the previous game, if it read a deal
        self.latest: dict[str, str] = {}  # each tag's value in the latest game that had it
        self.shared: dict[str, str] = {}  # '##' values given to games that omit the tag
        self.points_first: bool | None = None  # None until a game gives a non-empty award table

    def state(self) -> dict:
        """What parse_pbn's `carried_tags` takes to start where this state is."""
        return {"latest": dict(self.latest), "shared": dict(self.shared), "points_first": self.points_first}

    def resolve(self, game: _Game) -> dict[str, str]:
        """This game's tag values after copying; records a copying error on the game. Its award
        table, the file's first, fixes the pair order."""
        if self.points_first is None:
            words = facit.table_words(_comments_after(game, "Scoring"))
            if words:
                self.points_first = facit.is_points_first(words)
        values: dict[str, str] = {}
        for name, tag in game.tags.items():
            value = tag.value
            if value == "#":
                if name in _NOT_COPYABLE:
                    game.fail(Reason.UNKNOWN_VALUE, f"[{name}] cannot be copied with '#'", name)
                elif name not in self.latest:
                    game.fail(Reason.UNKNOWN_VALUE, "'#' copies an earlier game's value, but none has this tag", name)
                value = self.latest.get(name, "")
                self.shared.pop(name, None)
            elif value.startswith("##"):
                value = value[2:] or self.latest.get(name, "")
                self.shared[name] = value
            else:
                self.shared.pop(name, None)
            values[name] = value
        for name, value in self.shared.items():
            values.setdefault(name, value)
        if "Deal" not in game.tags and "Board" not in game.tags:
            for name, value in self.board.items():
                values.setdefault(name, value)
        self.latest.update(values)
        return values

    def read(self, values: dict[str, str], record: BoardRecord | Rejected) -> None:
        """Keep this game's board tags for the next game when it gave a usable deal."""
        has_deal = isinstance(record, BoardRecord) and record.owner is not None
        self.board = {name: values[name] for name in _BOARD_TAGS if name in values} if has_deal else {}


def _read_game(record: BoardRecord, game: _Game, carried: _CarriedTags) -> BoardRecord | Rejected:
    values = carried.resolve(game)
    result: BoardRecord | Rejected = record
    try:
        if game.error is not None:
            raise game.error
        _fill_record(record, game, values, bool(carried.points_first))
    except RecordError as error:
        result = record.reject(error.reason, error.message, error.field)
    carried.read(values, result)
    return result


def _fill_record(record: BoardRecord, game: _Game, values: dict[str, str], points_first: bool) -> None:
    """Set every field the tags give (an award table read in the file's pair order, `points_first`);
    raises RecordError naming the tag at fault."""
    get = values.get
    record.owner = _parse_deal(get("Deal", ""))
    record.event = get("Event") or None
    record.site = get("Site") or None
    record.date = get("Date") or None
    record.scoring = get("Scoring") or None
    record.source_score = get("Score") or None
    room = get("Room")
    record.room = room.lower() if room and room.lower() in ("open", "closed") else room or None
    players = [get(name) or None for name in _PLAYER_TAGS]
    record.players = players if any(players) else None
    record.board = _parse_board(get("Board", ""))
    record.dealer = _parse_seat(get("Dealer", ""), "Dealer")
    record.vulnerability = _parse_vulnerability(get("Vulnerable", ""))
    record.declarer = _parse_declarer(get("Declarer", ""))
    _parse_contract(record, get("Contract", ""))
    record.tricks = _parse_result(get("Result", ""), record.declarer)
    _read_award_table(record, game, "Scoring" in values, points_first)
    if "Auction" in game.tags and record.award_table is not None:
        record.problem_script = _parse_script(values["Auction"], game.tags["Auction"].words, record.dealer)
    elif "Auction" in game.tags:
        _parse_auction(record, values["Auction"], game.tags["Auction"].words, game.notes)
    if "Play" in game.tags:
        record.play = _parse_play(values["Play"], game.tags["Play"].words, trump_of(record))
    record.dd_tricks = _parse_dd(values, game)
    for name, value in values.items():
        if name not in _INTERPRETED:
            tag = game.tags.get(name)
            section = tag.section_text(game.chunk) if tag is not None else ""
            record.tags[name] = f"{value}\n{section}" if section else value


def _comments_after(game: _Game, tag: str) -> list[str]:
    return [text for name, text in game.award_comments if name == tag]


def _read_award_table(record: BoardRecord, game: _Game, has_scoring: bool, points_first: bool) -> None:
    """A problem's award table, from the comments after [Scoring "Facit"] (its value in any case),
    or, in a game with no [Scoring] and no auction but a script (one with an `AC`), from those
    after [Deal] when they read as a table; the typos repaired are added to the record's repairs."""
    repairs: list[Repair] = []
    if has_scoring:
        if record.scoring is None or record.scoring.strip().lower() != facit.FACIT.lower():
            return
        repairs += [] if record.scoring == facit.FACIT else [Repair.FACIT_SCORING_CASE]
        words = facit.table_words(_comments_after(game, "Scoring"), repairs)
        if words is None:
            return
        try:
            table = facit.parse_table(words, points_first, repairs)
        except ValueError as error:
            raise RecordError(Reason.SYNTAX, f"award table: {error}", "Scoring") from None
    else:
        auction = game.tags.get("Auction")
        if auction is not None and facit.OUR_CALL not in (word.upper() for word in auction.words):
            return  # a board played, whatever its comments say
        repairs.append(Repair.FACIT_SCORING_MISSING)
        words = facit.table_words(_comments_after(game, "Deal"), repairs)
        try:
            table = facit.parse_table(words, points_first, repairs) if words else None
        except ValueError:
            table = None  # a comment, not a table
        if table is None:
            return
    record.scoring = facit.FACIT
    record.award_table = [(award.contract, award.points) for award in table]
    record.repairs += repairs


def _parse_script(seat_text: str, words: list[str], dealer: int | None) -> list[int] | None:
    """A problem's [Auction]: its script as call indices from the dealer, facit.OUR_CALL_INDEX
    where our side is to call; None when it holds no call."""
    named = _parse_seat(seat_text, "Auction")
    if named is None or dealer is None:
        raise RecordError(Reason.UNKNOWN_VALUE, "a problem's script needs the seat of [Auction] and a [Dealer]",
                          "Auction")
    try:
        script = facit.parse_script(words, named, dealer)
    except ValueError as error:
        raise RecordError(Reason.SYNTAX, str(error), "Auction") from None
    return facit.script_indices(script) or None


def _parse_deal(text: str) -> np.ndarray | None:
    text = text.strip()
    if text in _UNKNOWN_TEXT:
        return None
    first_text, colon, hands_text = text.partition(":")
    first = SEATS.find(first_text.strip().upper())
    if not colon or first < 0 or len(first_text.strip()) != 1:
        raise RecordError(Reason.SYNTAX, f"{text!r} does not start with a seat and ':'", "Deal")
    parts = hands_text.split()
    if len(parts) != 4:
        raise RecordError(Reason.SYNTAX, f"{len(parts)} hands, not 4", "Deal")
    hands: list[list[int] | None] = [None] * 4
    for offset, part in enumerate(parts):
        if part != "-":
            hands[(first + offset) % 4] = _hand_cards(part)
    sizes = {len(hand) for hand in hands if hand is not None}
    if not sizes:
        raise RecordError(Reason.NOT_A_DEAL, "no hand is given", "Deal")
    if len(sizes) == 1 and (size := sizes.pop()) < 13:
        raise RecordError(Reason.NOT_A_DEAL, f"an end position with {size} cards per hand", "Deal")
    return owner_from_hands(hands, "Deal")


def _hand_cards(text: str) -> list[int]:
    """Cards of a 'K843.Q92.A75.J64' hand, read one suit at a time through a cache."""
    holdings = text.split(".")
    if len(holdings) != 4:
        raise RecordError(Reason.BAD_CARD, f"hand {text!r} does not have 4 suits separated by '.'", "Deal")
    cards: list[int] = []
    for position, holding in enumerate(holdings):
        key = (position, holding)
        suit_cards = _holding_cache.get(key)
        if suit_cards is None:
            try:
                suit_cards = parse_pbn_hand(".".join(holding if k == position else "" for k in range(4)))
            except ValueError:
                raise RecordError(Reason.BAD_CARD, f"hand {text!r}: {holding!r} holds a character that is not a rank",
                                  "Deal") from None
            if len(_holding_cache) < 100_000:
                _holding_cache[key] = suit_cards
        cards.extend(suit_cards)
    return cards


def _parse_board(text: str) -> int | None:
    text = text.strip()
    if text in _UNKNOWN_TEXT:
        return None
    return parse_count(text, INT32_MAX, "Board", "a board number")


def _parse_seat(text: str, field_name: str) -> int | None:
    text = text.strip()
    if text in _UNKNOWN_TEXT:
        return None
    seat = SEATS.find(text.upper())
    if seat < 0 or len(text) != 1:
        raise RecordError(Reason.UNKNOWN_VALUE, f"{text!r} is not a seat N, E, S or W", field_name)
    return seat


def _parse_declarer(text: str) -> int | None:
    text = text.strip()
    if text.startswith("^"):
        player = _parse_seat(text[1:], "Declarer")
        return None if player is None else partner(player)
    return _parse_seat(text, "Declarer")


def _parse_vulnerability(text: str) -> int | None:
    text = text.strip()
    if text in _UNKNOWN_TEXT:
        return None
    vulnerability = _VULNERABILITY.get(text.lower())
    if vulnerability is None:
        raise RecordError(Reason.UNKNOWN_VALUE, f"{text!r} is not None/Love/-, NS, EW or All/Both", "Vulnerable")
    return vulnerability


def _parse_contract(record: BoardRecord, text: str) -> None:
    text = text.strip()
    if text in _UNKNOWN_TEXT:
        return
    if text.upper() == "PASS":
        record.contract_level = 0
        return
    match = _CONTRACT.fullmatch(text)
    if match is None:
        raise RecordError(Reason.UNKNOWN_VALUE, f"{text!r} is not a contract like 4HX, 3NT or Pass", "Contract")
    record.contract_level = int(match.group(1))
    record.contract_strain = _STRAIN_OF[match.group(2).upper()]
    record.contract_doubled = len(match.group(3))


def _parse_result(text: str, declarer: int | None) -> int | None:
    """Declarer's tricks from "9", "^9" or "NS 9 EW 4" (the side form needs the declarer)."""
    text = text.strip().lstrip("^")
    if text in _UNKNOWN_TEXT:
        return None
    match = _RESULT_BY_SIDE.fullmatch(text) if text[0] in "NnEe" else None
    if match is None:
        return parse_count(text, INT8_MAX, "Result", "a number of tricks")
    by_side = {match.group(1).upper(): parse_count(match.group(2), INT8_MAX, "Result", "a number of tricks")}
    if match.group(3):
        by_side[match.group(3).upper()] = parse_count(match.group(4), INT8_MAX, "Result", "a number of tricks")
        if len(by_side) != 2 or sum(by_side.values()) != 13:
            raise RecordError(Reason.BAD_RESULT, f"{text!r}: the two sides' tricks do not add up to 13", "Result")
    if declarer is None:
        return None
    side, other = ("NS", "EW") if declarer % 2 == 0 else ("EW", "NS")
    return by_side[side] if side in by_side else 13 - by_side[other]


def _pieces(word: str, field_name: str) -> Iterable[tuple[str, str]]:
    """Split a section word into (kind, text): kinds item, note, nag, suffix, irregular."""
    if word.isalnum():
        return (("item", word),)
    return _annotated_pieces(word, field_name)


def _annotated_pieces(word: str, field_name: str) -> Iterator[tuple[str, str]]:
    for match in _PIECE.finditer(word):
        note, open_note, nag, suffix, irregular, item, stray = match.groups()
        note = open_note if note is None else note
        if note is not None:
            if not note.isdigit():
                raise RecordError(Reason.SYNTAX, f"note reference ={note}= is not a number", field_name)
            yield "note", note
        elif nag is not None:
            if not nag.isdigit():
                raise RecordError(Reason.SYNTAX, f"NAG ${nag} is not a number", field_name)
            yield "nag", nag
        elif suffix is not None:
            yield "suffix", suffix
        elif irregular is not None:
            yield "irregular", irregular
        elif item is not None:
            yield "item", item
        else:
            raise RecordError(Reason.SYNTAX, f"unexpected {stray!r} in {word!r}", field_name)


def _parse_call_text(text: str) -> int:
    call = _call_cache.get(text)
    if call is None:
        try:
            call = parse_call(text)
        except ValueError:
            raise RecordError(Reason.SYNTAX, f"{text!r} is not a call", "Auction") from None
        _call_cache[text] = call
    return call


def _parse_auction(record: BoardRecord, seat_text: str, words: list[str], notes: list[tuple[str, bool]]) -> None:
    first_column = _parse_seat(seat_text, "Auction")
    note_texts = _note_texts(notes, after_play=False)
    calls: list[int] = []
    alerts: list[bool] = []
    explanations: list[str | None] = []
    padding = 0
    ended = False
    for word in words:
        call = _call_cache.get(word)
        if call is not None and not ended:  # the common case: a plain call
            calls.append(call)
            alerts.append(False)
            explanations.append(None)
            continue
        for kind, text in _pieces(word, "Auction"):
            if ended:
                raise RecordError(Reason.SYNTAX, f"{text!r} after the end of the auction", "Auction")
            if kind == "item":
                upper = text.upper()
                if upper in ("-", "--"):
                    if calls:
                        raise RecordError(Reason.SYNTAX, "'-' after the first call", "Auction")
                    padding += 1
                    continue
                if upper in ("+", "*"):
                    ended = True
                    continue
                added = _all_pass(calls) if upper == "AP" else [_parse_call_text(text)]
                calls.extend(added)
                alerts.extend([False] * len(added))
                explanations.extend([None] * len(added))
                continue
            if not calls:
                if kind == "irregular":
                    continue
                raise RecordError(Reason.SYNTAX, f"annotation {text!r} before the first call", "Auction")
            if kind == "note":
                explanation = note_texts.get(text)
                if explanation:
                    previous = explanations[-1]
                    explanations[-1] = explanation if previous is None else f"{previous}; {explanation}"
            elif kind == "nag" or (kind == "suffix" and text == "!"):
                alerts[-1] = True
    if first_column is None:
        if calls:
            raise RecordError(Reason.UNKNOWN_VALUE, "[Auction] needs the seat of the first call", "Auction")
        return
    first_caller = (first_column + padding) % 4
    if record.dealer is None:
        record.dealer = first_caller
    elif calls and record.dealer != first_caller:
        raise RecordError(Reason.ILLEGAL_CALL,
                          f"the first call is {SEATS[first_caller]}'s but the dealer is {SEATS[record.dealer]}", "Auction")
    if calls:
        record.auction, record.alerts, record.explanations = calls, alerts, explanations


def _all_pass(calls: list[int]) -> list[int]:
    """The passes that 'AP' stands for: enough to end the auction."""
    trailing = 0
    for call in reversed(calls):
        if call != PASS:
            break
        trailing += 1
    needed = 3 if trailing < len(calls) else 4
    return [PASS] * max(needed - trailing, 0)


def _note_texts(notes: list[tuple[str, bool]], after_play: bool) -> dict[str, str]:
    """{'1': 'text'} from [Note "1:text"] tags of one section."""
    texts = {}
    for value, note_after_play in notes:
        number, colon, text = value.partition(":")
        if colon and note_after_play == after_play:
            texts.setdefault(number.strip(), text.strip())
    return texts


def _parse_card_text(text: str) -> int:
    card = _card_cache.get(text)
    if card is None:
        try:
            card = parse_card(text)
        except ValueError:
            raise RecordError(Reason.BAD_CARD, f"{text!r} is not a card", "Play") from None
        _card_cache[text] = card
    return card


def _parse_play(seat_text: str, words: list[str], trump: int | None) -> list[int] | None:
    first_column = _parse_seat(seat_text, "Play")
    columns: list[int | None] = []
    ended = False
    for word in words:
        card = _card_cache.get(word)
        if card is not None and not ended:  # the common case: a plain card
            columns.append(card)
            continue
        for kind, text in _pieces(word, "Play"):
            if kind != "item":
                continue
            if ended:
                raise RecordError(Reason.SYNTAX, f"{text!r} after the end '*' of the play", "Play")
            if text in ("-", "--"):  # not played (e.g. after a claim)
                columns.append(NOT_PLAYED)
            elif text == "+":  # not yet played: the play ends before it
                columns.append(None)
            elif text == "*":
                ended = True
            else:
                columns.append(_parse_card_text(text))
    if first_column is None:
        if any(card is not None for card in columns):
            raise RecordError(Reason.UNKNOWN_VALUE, "[Play] needs the seat of the opening lead", "Play")
        return None
    if trump is None:
        play = columns[:columns.index(None)] if None in columns else columns
    else:
        play = _played_order(columns, first_column, trump)
    while play and play[-1] == NOT_PLAYED:  # the tricks after a claim: nothing to keep
        play.pop()
    return play or None


def _played_order(columns: list[int | None], first_column: int, trump: int) -> list[int]:
    """Cards in the order played from a table whose rows start with `first_column`'s card; a card
    not played stays NOT_PLAYED in its place. The play ends at a card not yet played (None), and
    at a trick with no card played (its winner, the next leader, is unknown)."""
    play: list[int] = []
    leader = first_column
    for start in range(0, len(columns), 4):
        row = columns[start:start + 4]
        row += [None] * (4 - len(row))
        trick = [row[(leader - first_column + offset) % 4] for offset in range(4)]
        if all(card == NOT_PLAYED for card in trick):
            break
        for card in trick:
            if card is None:
                return play
            play.append(card)
        leader = (leader + trick_winner(trick, trump)) % 4
    return play


def trump_of(record: BoardRecord) -> int | None:
    """Strain of the stated contract, else of the auction's; None when neither is known."""
    if record.contract_level is not None:
        return record.contract_strain if record.contract_level > 0 else None
    if record.auction is None or record.dealer is None:
        return None
    try:
        contract = replay_to_end(record.dealer, record.auction)[0].contract()
    except IllegalCall:
        return None
    return contract.strain if contract is not None else None


def _parse_dd(values: dict[str, str], game: _Game) -> list[int | None] | None:
    """dd_tricks from DoubleDummyTricks and OptimumResultTable; None when neither is given."""
    cells: list[int | None] = [None] * 20
    given = False
    ddt = values.get("DoubleDummyTricks", "").strip()
    if ddt:
        if len(ddt) != 20 or any(digit not in "0123456789abcdefABCDEF" for digit in ddt):
            raise RecordError(Reason.SYNTAX, f"{ddt!r} is not 20 hex digits", "DoubleDummyTricks")
        for cell, digit in zip(DDT_CELLS, ddt):
            cells[cell] = int(digit, 16)
        given = True
    if "OptimumResultTable" in values:
        tag = game.tags.get("OptimumResultTable")
        rows = _optimum_result_rows(values["OptimumResultTable"], tag.words if tag else [])
        for cell, tricks in rows:
            if cells[cell] is not None and cells[cell] != tricks:
                raise RecordError(Reason.UNKNOWN_VALUE,
                                  f"{SEATS[cell // 5]} {STRAINS[cell % 5]}: {tricks} tricks but DoubleDummyTricks "
                                  f"says {cells[cell]}", "OptimumResultTable")
            cells[cell] = tricks
            given = True
    return cells if given else None


def _optimum_result_rows(header: str, words: list[str]) -> list[tuple[int, int]]:
    """(cell, tricks) per row of an OptimumResultTable, its columns found by name."""
    names = header.split(";") if ";" in header else header.split()
    roles = [_DD_COLUMNS.get(name.split("\\")[0].strip().lstrip("+-").lower()) for name in names]
    if not all(role in roles for role in ("declarer", "strain", "tricks")):
        raise RecordError(Reason.SYNTAX, f"columns {header!r} lack Declarer, Denomination or Result",
                          "OptimumResultTable")
    if len(words) % len(names):
        raise RecordError(Reason.SYNTAX, f"{len(words)} entries do not fill rows of {len(names)}", "OptimumResultTable")
    rows = []
    for start in range(0, len(words), len(names)):
        row = dict(zip(roles, words[start:start + len(names)]))
        seat = SEATS.find(row["declarer"].upper())
        strain = _STRAIN_OF.get(row["strain"].upper())
        if seat < 0 or len(row["declarer"]) != 1 or strain is None:
            raise RecordError(Reason.SYNTAX, f"row {' '.join(words[start:start + len(names)])!r}",
                              "OptimumResultTable")
        rows.append((seat * 5 + strain, parse_count(row["tricks"], INT8_MAX, "OptimumResultTable",
                                                    "a number of tricks")))
    return rows


# ---------------------------------------------------------------- pieces of a large file

# Empty lines before a line that starts with a tag: a game break whatever precedes it (a string,
# `;` comment or `%` line ends with its line; a `{` comment ends before such lines, see
# _BREAK_SCAN), so the text on either side splits into the same games alone as in the file.
_SURE_BREAK = re.compile(rb"\n(?:[ \t\r\f\v]*\n)+(?=[ \t]*\[)")
_LONE_CR = re.compile(rb"\r(?!\n)")


def range_starts(blocks: Iterable[bytes], every: int) -> list[tuple[int, int, int, dict]]:
    """Where a file given as consecutive `blocks` can be cut to be parsed in pieces, about every
    `every` bytes: (byte offset, its 1-based line, records before it, the '#'/'##' state there) per
    piece after the first. parse_pbn(piece, source_file, state) then reads the records a whole-file
    parse reads there, positions and lines counted from the piece. Reads one block at a time.

    Cuts are at a _SURE_BREAK before a game with [Deal] or [Board], a game that inherits no board
    tags: so the scan keeps none (they never change the '#' state). Empty for a file that must be
    read whole: not UTF-8 (decoded game by game), a UTF-16 or UTF-32 byte order mark, CR-only line
    ends, or no _SURE_BREAK for more than 16 MiB or 4 x `every` bytes (memory stays bounded)."""
    carried = _CarriedTags()
    starts: list[tuple[int, int, int, dict]] = []
    offset, line, position, last_cut = 0, 1, 0, 0
    pending = b""
    for block in blocks:
        if offset == 0 and not pending and is_wide(bom_encoding(block)[0]):
            return []
        pending += block
        segment_start = 0
        for match in _SURE_BREAK.finditer(pending):
            segment = pending[segment_start:match.end()]
            text = _segment_text(segment, offset == 0)
            if text is None:
                return []
            cut_wanted = offset - last_cut >= every
            for chunk, _ in _chunks(text):
                if _CONTROL.search(chunk):  # one undecodable record
                    position += 1
                    cut_wanted = False
                    continue
                for game in _games(chunk):
                    if cut_wanted and ("Deal" in game.tags or "Board" in game.tags):
                        starts.append((offset, line, position, carried.state()))
                        last_cut = offset
                    cut_wanted = False
                    carried.resolve(game)
                    position += 1
                cut_wanted = False
            line += segment.count(b"\n")
            offset += len(segment)
            segment_start = match.end()
        pending = pending[segment_start:]
        if len(pending) > max(4 * every, 1 << 24):
            return []
    return starts if _segment_text(pending.rstrip(b"\x1a"), offset == 0) is not None else []


def _segment_text(segment: bytes, at_file_start: bool) -> str | None:
    """A piece of the file as parse_pbn decodes it when the file is UTF-8; None if it is not."""
    if _LONE_CR.search(segment):
        return None
    if at_file_start and segment.startswith(b"\xef\xbb\xbf"):
        segment = segment[3:]
    try:
        return drop_invisible(segment.decode("utf-8"))[0]
    except UnicodeDecodeError:
        return None
