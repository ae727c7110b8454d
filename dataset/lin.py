"""Reader and writer for BBO's LIN format: vugraph archives (many boards, one `qx` each) and
single-board hand records (`pn|...|md|...|ah|Board 3|...`).

A LIN file is a flat run of `key|value|` pairs; line breaks between pairs mean nothing. The
reader only translates syntax into a `BoardRecord`; `validate.check` applies the bridge rules.

Decisions (see the module tests for the real files behind each):
* Boards: each `qx` starts one. A file without `qx` holds hand records: its first board starts
  at its first pair (at its first `pn` or `md` after text that is not LIN), and a `pn` or `md`
  after the current board's `md` starts the next (the
  synthetic corpus writes one `format_lin` board per line). Pairs before the first `qx` are the
  file header; board data there (`md`, `mb`, `pc`...) is rejected, never attached to a board.
  Such a key also counts where garbage or a lost '|' next to it broke the pairs (see
  `_board_keys`): a garbage byte costs the board that holds it, never its neighbour too.
* `vg`, `rs` and `pn` are file-level: they apply to the board they appear in and to later ones.
  An empty `vg`, or a `pn` without 4 or 8 names, rejects the board (or header) holding it and
  changes nothing for later boards (damage to a `pg||` or a `pc` makes them).
* A header always starts its own scope: in a file with `qx`, a valid `vg`, `pn` or `rs` that
  comes after a board's data (or after a stray token), followed by nothing but header and layout
  pairs up to the next `qx`, is a header of its own (files concatenated), not part of the board
  before; one holding a `vg` starts afresh (no event, names or results of the text before).
* Text that is not LIN (a junk line, an error message between files concatenated): stray tokens
  after the last pair of a board or header, from a later line than that pair, are one record
  of their own (UNKNOWN_FORMAT, or UNDECODABLE_BYTES for binary data) up to the next board or
  header; the board before is read without them.
* `rs` (the scoreboard's "4SWx-2" per board and room) is kept verbatim in `tags["rs"]` and used
  for nothing else: it is a summary typed by the vugraph operator, while the auction, the play
  and `mc` are the record itself (`validate.check` derives contract and tricks from those).
* `nt` (kibitzer commentary) is dropped; `pg`, `rh` and `st` are layout (kept in `tags` only
  when not empty). Any other key goes to `tags` verbatim (repeats joined with '|'), never an
  error.
* Numbers (`qx`'s board, `mc`, `ah`'s "Board n") are ASCII digits within their column's range
  (`text.parse_count`): `o²`, `o3000000000` or `mc|٣|` is UNKNOWN_VALUE for that board (in `vg`
  such a first board number is taken as not given).
* Alerts are the `!` suffix of `mb` only; `an` fills `explanations` of the call before it.
* A later `md` or `mc` in the same board replaces an earlier one (operators resend a corrected
  deal; a claim made after more play supersedes).
* The keys BBO writes are read in any case (`QX|` is `qx|`), but for `st` (`ST` is a card);
  another two-letter token in upper case is not a key.
* Free text (`nt`, `an`) may contain '|': while the token where the next key should be is not
  one of the keys BBO writes (`_KNOWN_KEYS`), it is taken as part of the text, so `an|1 | xx |`
  makes no tag `xx`. Outside free text any two-letter token is a key. A stray token anywhere
  else rejects its board as SYNTAX and parsing re-aligns on the next token.
* An auction needs a dealer, which only `md` gives: a board with calls and an empty `md`, none,
  or dealer digit 0 is rejected naming `md`.
* A byte order mark inside the file (files concatenated), a zero-width space or a word joiner is
  dropped (`text.drop_invisible`) and listed as a repair on the board of its line.
* Bytes: UTF-8, or UTF-16/UTF-32 when a byte order mark says so; in a UTF-8 file the bytes of a
  board (or the header) that are not UTF-8 are read as cp1252, its UTF-8 text as UTF-8. A board
  with a byte readable in neither, or holding a NUL byte (binary data), is UNDECODABLE_BYTES,
  naming the pair that holds it, with
  such bytes written `\x81` in its raw text (such a header gets U+FFFD for the bad bytes: its
  names and event are not worth losing the boards for; a header holding a NUL is rejected, so a
  binary file is one UNDECODABLE_BYTES record, yet its pairs before the NUL are read). Other
  control characters are kept: the real archives have stray ^H/^P/^V typed into commentary.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from functools import lru_cache
from string import ascii_lowercase
from typing import Iterator, Sequence

import numpy as np

from .encodings import RANKS, SUITS, E, N, S, W, call_name, parse_call
from .record import NOT_PLAYED, BoardRecord, Reason, RecordError, Rejected, Repair
from .text import INT8_MAX, INT32_MAX, any_line_between, bom_encoding, drop_invisible, parse_count
from .validate import owner_from_hands

_KEYS = frozenset(a + b for a in ascii_lowercase for b in ascii_lowercase)
# The keys BBO writes (every key of the real archives): free text runs on past any other.
_KNOWN_KEYS = frozenset(("qx", "md", "mb", "an", "pc", "mc", "sv", "ah", "pn", "vg", "rs", "nt", "pg", "rh", "st"))
_ANY_CASE_KEYS = _KNOWN_KEYS - {"st"}  # read in any case (QX|); ST is also the ten of spades
_FREE_TEXT = frozenset(("nt", "an"))
_LAYOUT = frozenset(("pg", "rh", "st"))  # carry nothing when empty (else kept in tags)
_SKIPPED = frozenset(("pc", "pg", "nt"))  # read in bulk or not at all
_BOARD_DATA = frozenset(("md", "sv", "mb", "an", "pc", "mc", "ah"))

_MD_SEATS = (S, W, N, E)  # md lists hands South, West, North, East
_DEALER_DIGITS = {"1": S, "2": W, "3": N, "4": E}
_DEALER_DIGIT_OF = {seat: digit for digit, seat in _DEALER_DIGITS.items()}
_VULNERABILITY = {"o": 0, "0": 0, "n": 1, "e": 2, "b": 3}
_SV_OF = "oneb"
_SCORING = {"I": "IMP", "P": "MP", "B": "BAM"}
_ROOMS = {"o": "open", "c": "closed"}
_QX = re.compile(r"([oc])([^,]*)(?:,.*)?", re.S)
_AH_BOARD = re.compile(r"\s*board\s+([0-9]+)\s*", re.I)

_SUIT_OF_LETTER = {letter: suit for suit, letter in enumerate(SUITS)}
_SUIT_OF_LETTER.update({letter.lower(): suit for letter, suit in list(_SUIT_OF_LETTER.items())})
_RANK_OF_CHAR = {char: rank for rank, char in enumerate(RANKS)}
_RANK_OF_CHAR.update({char.lower(): rank for char, rank in list(_RANK_OF_CHAR.items())})


def _card_spellings() -> dict[str, int]:
    """Every way a `pc` value names a card: suit then rank, any case, '10' for the ten."""
    spellings = {}
    for suit_letter, suit in _SUIT_OF_LETTER.items():
        for rank_char, rank in _RANK_OF_CHAR.items():
            spellings[suit_letter + rank_char] = suit * 13 + rank
        spellings[suit_letter + "10"] = suit * 13 + RANKS.index("T")
    return spellings


def _call_spellings() -> dict[str, int]:
    """The usual LIN `mb` spellings (p, d, r, 1c ... 7n, any case); others go to parse_call."""
    spellings = {}
    for call in range(38):
        name = call_name(call)
        lin = {"P": "p", "X": "d", "XX": "r"}.get(name, name.replace("NT", "N"))
        for spelling in {lin, lin.upper(), lin.lower(), name, name.lower()}:
            spellings[spelling] = call
    return spellings


_CARDS = _card_spellings()
_CALLS = _call_spellings()
_SUIT_LETTER = re.compile("([SHDCshdc])")
# A board-start (or header) key, blanks or garbage, its '|': in lower case, and in any case for a
# file whose pairs are not all known lower-case keys (_split_pairs' fast path), which may hold QX|.
_QX_MARK = re.compile(r"(qx)[^\w|]*\|")
_HAND_MARK = re.compile(r"(pn|md)[^\w|]*\|")
_HEADER_MARK = re.compile(r"(?<![A-Za-z0-9])(vg|pn|rs)[^\w|]*\|")
_ANY_CASE = {pattern: re.compile(pattern.pattern, re.I) for pattern in (_QX_MARK, _HAND_MARK, _HEADER_MARK)}
_HEADER_KEYS = frozenset(("vg", "pn", "rs"))
_UNREAD = re.compile("[\udc00-\udcff]")  # a byte the file's encoding could not read (see _keep_bytes)
_UNREAD_RUN = re.compile("[\udc00-\udcff]+")
_NOT_CP1252 = frozenset((0x81, 0x8D, 0x8F, 0x90, 0x9D))  # the bytes cp1252 leaves undefined


def _keep_bytes(error: UnicodeDecodeError) -> tuple[str, int]:
    """Decoding error handler: each byte the codec cannot read becomes U+DC00 + byte, as
    surrogateescape does, for UTF-16 and UTF-32 too (surrogateescape refuses them)."""
    return "".join(chr(0xDC00 + byte) for byte in error.object[error.start:error.end]), error.end


codecs.register_error("bridgeflow.lin.keep_bytes", _keep_bytes)


# ------------------------------------------------------------------------------------ reading

def parse_lin(data: bytes, source_file: str) -> Iterator[BoardRecord | Rejected]:
    """One BoardRecord or Rejected per board, in file order, and one Rejected per header that
    cannot be read and per run of text that is not LIN; never raises for bad input."""
    encoding = bom_encoding(data)[0] or "utf-8"
    text = data.decode(encoding, "bridgeflow.lin.keep_bytes")
    if text.startswith("\ufeff"):
        text = text[1:]
    text, invisible_lines = drop_invisible(text)
    state = _FileState()
    position, line, previous_offset = 0, 1, 0
    deals: dict[str, tuple[int | None, np.ndarray | None]] = {}  # md text -> parsed (rooms repeat it)
    for start, end, kind in _segments(text):
        line += text.count("\n", previous_offset, start)
        previous_offset = start
        raw = text[start:end]
        pairs = _split_pairs(raw)
        junk_at = _junk_start(raw, pairs, kind == "header")
        if junk_at is not None:
            raw = raw[:junk_at]
            pairs = _split_pairs(raw)
        if kind == "board":
            item = _read_board(BoardRecord(source_file=source_file, source_format="lin", source_position=position,
                                           source_line=line, raw_text=raw), pairs, encoding, state, deals)
            if (invisible_lines and isinstance(item, BoardRecord)
                    and any_line_between(invisible_lines, line, line + raw.rstrip().count("\n"))):
                item.repairs.append(Repair.INVISIBLE_CHARACTER_DROPPED)
        else:
            if "vg" in pairs[0]:  # another file's header: nothing of the one before applies
                state = _FileState()
            item = _read_header_part(raw, encoding, state, source_file, position, line)
        if item is not None:
            yield item
            position += 1
        if junk_at is not None:
            junk = text[start + junk_at:end]
            junk_line = line + text.count("\n", start, start + junk_at + len(junk) - len(junk.lstrip()))
            junk = junk.strip()
            error = _binary(junk) or _undecodable(junk, encoding) or RecordError(
                Reason.UNKNOWN_FORMAT, f"text that is not LIN: {_escaped(junk)[:40]!r}", "lin")
            yield Rejected(source_file, "lin", position, junk_line, _escaped(junk), error.reason, error.message,
                           error.field)
            position += 1


def _read_board(record: BoardRecord, pairs, encoding: str, state: _FileState, deals: dict) -> BoardRecord | Rejected:
    """The board whose raw text and pairs are given, read (or rejected) as `state` and `deals` say."""
    raw = record.raw_text
    error = _binary(raw) or _undecodable(raw, encoding)
    if error is not None:
        record.raw_text = _escaped(raw)
        return record.reject(error.reason, error.message, error.field)
    record.raw_text = _plain(raw, encoding)
    keys, values, _ = pairs if record.raw_text is raw else _split_pairs(record.raw_text)
    try:
        _fill_board(record, keys, values, state, deals)
        _check_dealer(record, keys, values)
    except RecordError as error:
        return record.reject(error.reason, error.message, error.field)
    return record


def _read_header_part(header_text: str, encoding: str, state: _FileState, source_file: str, position: int,
                      line: int) -> Rejected | None:
    """Take a header's pairs into `state`; a Rejected when it holds an error (a header holding a
    NUL is rejected, but the pairs before it count)."""
    header_error = _binary(header_text)
    readable = header_text
    if header_error is not None:
        readable = header_text[:header_text.rfind("|", 0, header_text.index("\x00")) + 1]
    header_keys, header_values, _ = _split_pairs(_plain(readable, encoding))
    pairs_error = _read_header(header_keys, header_values, state)
    header_error = header_error or pairs_error
    if header_error is None:
        return None
    return Rejected(source_file, "lin", position, line, _escaped(header_text), header_error.reason,
                    header_error.message, header_error.field)


def _segments(text: str) -> list[tuple[int, int, str]]:
    """(start, end, "header" | "board") of the file's parts: its header (the text before the
    first board, empty or not), its boards, and each later header: a `vg`, `pn` or `rs` after a
    board's data or after a stray token (another file's header, in files concatenated)."""
    pairs = _split_pairs(text)
    keys = pairs[0]
    clean = isinstance(pairs[2], range)  # every pair has a known lower-case key (the fast path)
    starts = [offset for offset, _ in _board_keys(_QX_MARK if clean else _ANY_CASE[_QX_MARK], text, pairs)]
    vugraph = bool(starts)
    starts = starts or _hand_record_starts(text, pairs, clean)
    if not starts:
        return [(0, len(text), "header")]
    cuts = [(start, "board") for start in starts]
    if vugraph and (not clean or not _HEADER_KEYS.isdisjoint(keys[keys.index("qx"):])):
        cuts += [(offset, "header")
                 for offset, _ in _board_keys(_HEADER_MARK if clean else _ANY_CASE[_HEADER_MARK], text, pairs)]
        cuts.sort()
    parts = [(0, cuts[0][0], "header")]
    for index, (start, kind) in enumerate(cuts):
        end = cuts[index + 1][0] if index + 1 < len(cuts) else len(text)
        if kind == "header":
            scope_end = next((offset for offset, later in cuts[index + 1:] if later == "board"), len(text))
            if not (_follows_board_data(text[parts[-1][0]:start]) and _is_header(text[start:scope_end])):
                parts[-1] = (parts[-1][0], end, parts[-1][2])  # a board's own pn or vg: part of the board
                continue
        parts.append((start, end, kind))
    return parts


def _is_header(part: str) -> bool:
    """Whether `part` (from a vg, pn or rs up to the next board) reads as a header: header and
    layout pairs only, the first of them valid (a pg|| damaged into vg|| is not)."""
    keys, values, _ = _split_pairs(part)
    try:
        _FileState().apply(keys[0], values[0])
    except RecordError:
        return False
    return all(key is None or key in _HEADER_KEYS or key in _LAYOUT or key == "nt" for key in keys)


def _follows_board_data(part: str) -> bool:
    """Whether `part` holds board data or a stray token: a header key after it starts a header."""
    keys = _split_pairs(part)[0]
    return None in keys or not _BOARD_DATA.isdisjoint(keys)


def _junk_start(raw: str, pairs, header: bool) -> int | None:
    """Offset in a board or header of its last lines when they are not LIN: stray tokens after its
    last pair, from a later line than that pair's (a line of junk, an error message between files
    concatenated), or a whole header without a pair. None when there is none: a stray token on the
    pair's own line is the board's."""
    keys, _, key_tokens = pairs
    if not keys or keys[-1] is not None:
        return None
    first = len(keys)
    while first > 0 and keys[first - 1] is None:
        first -= 1
    if first == 0:
        return 0 if header else None
    offset = -1
    for _ in range(key_tokens[first]):
        offset = raw.index("|", offset + 1)
    junk = raw[offset + 1:]
    return offset + 1 if "\n" in junk[:len(junk) - len(junk.lstrip())] else None


def _hand_record_starts(text: str, pairs, clean: bool) -> list[int]:
    """Offsets where the boards of a file without `qx` begin (see the module docstring)."""
    if _BOARD_DATA.isdisjoint(pairs[0]):
        return []
    marks = _board_keys(_HAND_MARK if clean else _ANY_CASE[_HAND_MARK], text, pairs)
    first = len(text) - len(text.lstrip())
    if marks and not clean and None in _split_pairs(text[:marks[0][0]])[0]:
        first = marks[0][0]  # text that is not LIN before the first board: a header part of its own
    starts, has_deal = [first], False
    for offset, key in marks:
        if has_deal:
            starts.append(offset)
            has_deal = False
        has_deal = has_deal or key == "md"
    return starts


def _board_keys(pattern: re.Pattern, text: str, pairs) -> list[tuple[int, str]]:
    """(offset, key) of each board-start key found by `pattern` where the pairs put a key, or
    where garbage or a lost '|' before it broke the pairs: at the end of a stray token, or, with
    no letter or digit glued to it, of a token of free text or of a value followed by a stray
    token. Never in a value that the pairs read cleanly (an explanation 'qx', a player 'wangqx')."""
    keys, _, key_tokens = pairs
    found, token, counted = [], 0, 0
    for match in pattern.finditer(text):
        token += text.count("|", counted, match.start())  # the match is in this token
        counted = match.start()
        pair = bisect_right(key_tokens, token) - 1
        key = match.group(1).lower()
        if token == key_tokens[pair]:
            counts = keys[pair] in (key, None)
        else:
            glued = text[match.start() - 1].isalnum()
            broken = token > key_tokens[pair] + 1 or (pair + 1 < len(keys) and keys[pair + 1] is None)
            counts = broken and not glued
        if counts:
            found.append((match.start(), key))
    return found


def _binary(part: str) -> RecordError | None:
    """UNDECODABLE_BYTES for a part of the file that holds a NUL byte: binary data, not text
    (or UTF-16 without a byte order mark, when every other character is NUL)."""
    nul = part.find("\x00")
    if nul < 0:
        return None
    if _looks_utf16(part[:64]):
        return RecordError(Reason.UNDECODABLE_BYTES, "NUL bytes: UTF-16 text without a byte order mark",
                           "lin")
    return RecordError(Reason.UNDECODABLE_BYTES, "NUL byte: binary data, not text", _field_at(part, nul))


def _looks_utf16(sample: str) -> bool:
    """Whether every other character is NUL, and only those (ASCII text in UTF-16)."""
    even, odd = sample[0::2], sample[1::2]
    return len(odd) > 1 and any(nuls == "\x00" * len(nuls) and "\x00" not in other
                                for nuls, other in ((even, odd), (odd, even)))


def _undecodable(part: str, encoding: str) -> RecordError | None:
    """UNDECODABLE_BYTES for a part of the file with a byte that the file's encoding cannot
    read and that, in a UTF-8 file, is not cp1252 either (older archives are cp1252)."""
    for match in _UNREAD.finditer(part):
        byte = ord(match.group()) - 0xDC00
        if encoding != "utf-8":
            message = f"byte {byte:#04x} is not part of a {encoding.upper()} character"
        elif byte in _NOT_CP1252:
            message = f"byte {byte:#04x} is neither UTF-8 nor cp1252"
        else:
            continue
        return RecordError(Reason.UNDECODABLE_BYTES, message, _field_at(part, match.start()))
    return None


def _plain(part: str, encoding: str) -> str:
    """A part of the file as text: in a UTF-8 file, each run of bytes that are not UTF-8 reads as
    cp1252 and the UTF-8 around it stays as it is (one stray byte in a header must not garble the
    names and event of every board); what is still unreadable (checked by `_undecodable` where it
    matters) becomes U+FFFD."""
    if _UNREAD.search(part) is None:
        return part
    if encoding == "utf-8":
        return _UNREAD_RUN.sub(lambda run: run.group().encode("utf-8", "surrogateescape").decode("cp1252", "replace"),
                               part)
    return _UNREAD.sub("\ufffd", part)


def _escaped(part: str) -> str:
    """The part with each unreadable byte written as `\\x81`: raw text that is valid Unicode."""
    return _UNREAD.sub(lambda match: f"\\x{ord(match.group()) - 0xDC00:02x}", part)


def _field_at(text: str, offset: int) -> str:
    """The field (as `_field` names it) whose pair holds text[offset]."""
    keys, _, token_indices = _split_pairs(text)
    pair = bisect_right(token_indices, text.count("|", 0, offset)) - 1
    return _field(keys, pair) if pair >= 0 else "lin"


def _field(keys: list[str | None], index: int) -> str:
    """The LIN key of pair `index`, with its ordinal for calls and cards (`mb[3]`); 'lin' for a
    stray token."""
    key = keys[index]
    if key is None:
        return "lin"
    return f"{key}[{keys[:index].count(key)}]" if key in ("mb", "pc") else key


def _split_pairs(text: str) -> tuple[list[str | None], list[str], Sequence[int]]:
    """`key|value|` pairs as parallel lists: keys, values, index of each key token among the
    '|'-separated tokens. A token where a key should be but that is not one gets key None
    (value = token)."""
    tokens = text.split("|")
    if len(tokens) % 2 == 1 and not tokens[-1].strip():
        keys = [token.strip() for token in tokens[0:-1:2]]
        if _KNOWN_KEYS.issuperset(keys):  # the usual case: every other token is a key
            return keys, tokens[1::2], range(0, len(tokens) - 1, 2)
    keys, values, token_indices = [], [], []
    last = len(tokens) - 1
    index = 0
    while index < last:
        key = tokens[index].strip()
        token_indices.append(index)
        if key not in _KEYS and key.lower() in _ANY_CASE_KEYS:
            key = key.lower()  # QX| is qx|
        if key not in _KEYS:
            keys.append(None)
            values.append(tokens[index])
            index += 1
            continue
        value = tokens[index + 1]
        index += 2
        if key in _FREE_TEXT:
            while index < last and tokens[index].strip().lower() not in _KNOWN_KEYS:
                value += "|" + tokens[index]
                index += 1
        keys.append(key)
        values.append(value)
    if index == last and tokens[last].strip():  # text after the last '|'
        keys.append(None)
        values.append(tokens[last])
        token_indices.append(last)
    return keys, values, token_indices


class _FileState:
    """What the file-level keys (vg, rs, pn) and the header's other keys have said so far."""

    def __init__(self):
        self.event: str | None = None
        self.scoring: str | None = None
        self.first_board: int | None = None
        self.results: list[str] | None = None
        self.names: list[str] | None = None
        self.vg: str | None = None
        self.tags: dict[str, str] = {}

    def apply(self, key: str, value: str) -> bool:
        """Take a file-level pair; False when the key is not file-level. Raises RecordError, and
        changes nothing, for an empty vg or a pn without 4 or 8 names: what one damaged byte makes
        of a board's pg|| or pc|c6| must not change the boards after it."""
        if key == "vg":
            if not value.strip():
                raise RecordError(Reason.UNKNOWN_VALUE, "vg is empty (no event, scoring or board numbers)", "vg")
            fields = value.split(",")
            self.vg = value
            self.event = fields[0].strip() or None
            scoring = fields[2].strip() if len(fields) > 2 else ""
            self.scoring = _SCORING.get(scoring, scoring) or None
            first = fields[3].strip() if len(fields) > 3 else ""
            try:
                self.first_board = parse_count(first, INT32_MAX, "vg", "a board number")
            except RecordError:
                self.first_board = None
        elif key == "rs":
            self.results = value.split(",")
        elif key == "pn":
            names = _split_names(value)
            if len(names) not in (4, 8):
                raise RecordError(Reason.UNKNOWN_VALUE, f"{value[:40]!r} is not 4 or 8 names (S, W, N, E, per room)", "pn")
            self.names = names
        else:
            return False
        return True

    def players(self, room: str | None) -> list[str | None] | None:
        """N, E, S, W names for a board in `room` (pn lists S, W, N, E, per room in vugraph)."""
        names = self.names
        if names is None:
            return None
        if len(names) == 8 and room is not None:
            names = names[:4] if room == "open" else names[4:]
        if len(names) != 4:
            return None
        south, west, north, east = (name.strip() or None for name in names)
        return [north, east, south, west]

    def result(self, board: int | None, room: str | None) -> str | None:
        """This board's `rs` entry: rs lists vg's first board onwards, open then closed room."""
        if self.results is None or self.first_board is None or board is None or room is None:
            return None
        index = 2 * (board - self.first_board) + (room == "closed")
        return self.results[index] if 0 <= index < len(self.results) else None


def _split_names(value: str) -> list[str]:
    """pn's comma-separated names. Some archives write 'Surname, Initial' names: when a plain
    split does not give 4 or 8 names, a comma followed by a space is read as part of a name."""
    names = value.split(",")
    if len(names) not in (4, 8):
        alternative = re.split(r",(?! )", value)
        if len(alternative) in (4, 8):
            return alternative
    return names


def _read_header(keys, values, state: _FileState) -> RecordError | None:
    """Take the pairs before the first board into `state`; board data there is an error."""
    for index, (key, value) in enumerate(zip(keys, values)):
        if key is None:
            return _stray_token(keys, values, index)
        if key in _BOARD_DATA:
            return RecordError(Reason.SYNTAX, f"{key}|{value[:40]}| before the first board (qx)", key)
        try:
            if state.apply(key, value) or key == "nt" or (key in _LAYOUT and not value.strip()):
                continue
        except RecordError as error:
            return error
        _add_tag(state.tags, key, value)
    return None


def _stray_token(keys, values, index: int) -> RecordError:
    """A token where a key should be. It is junk, or the value before it is (a junk token or a
    '|' in a value pushed the real value to where the key should be): the message names the
    value before it when only the token reads as a value of that pair's key."""
    token = values[index].strip()[:40]
    if index == 0 or keys[index - 1] is None:
        return RecordError(Reason.SYNTAX, f"stray token {token!r} where a LIN key was expected", "lin")
    key, value = keys[index - 1], values[index - 1].strip()[:40]
    if _reads_as(key, values[index]) and not _reads_as(key, values[index - 1]):
        message = f"stray token {value!r} between {key}| and its value {token!r}"
    else:
        message = f"stray token {token!r} after {key}|{value}|"
    return RecordError(Reason.SYNTAX, message, _field(keys, index - 1))


def _reads_as(key: str, value: str) -> bool:
    """Whether `value` alone is a valid value of `key` (any text is, for keys without syntax)."""
    try:
        _fill_board(BoardRecord("", "lin", 0, 0), [key], [value], _FileState(), {})
    except RecordError:
        return False
    return True


def _add_tag(tags: dict[str, str], key: str, value: str) -> None:
    tags[key] = tags[key] + "|" + value if key in tags else value


def _fill_board(record: BoardRecord, keys, values, state: _FileState, deals: dict) -> None:
    """Fill `record` from its pairs; raises RecordError naming the LIN key at fault."""
    tags = dict(state.tags)
    if None in keys:
        raise _stray_token(keys, values, keys.index(None))
    if "pc" in keys:
        record.play = _parse_play([value for key, value in zip(keys, values) if key == "pc"])
    calls: list[int] | None = None
    alerts: list[bool] = []
    explanations: list[str | None] = []
    for key, value in [pair for pair in zip(keys, values) if pair[0] not in _SKIPPED]:
        if key == "mb":
            token = value.strip()
            alerts.append(token.endswith("!"))
            token = token.rstrip("!").strip()
            call = _CALLS.get(token)
            if call is None:
                call = _parse_other_call(token, len(alerts) - 1)
            if calls is None:
                calls = [call]
            else:
                calls.append(call)
            explanations.append(None)
        elif key == "an":
            if calls is None:
                _add_tag(tags, key, value)
            else:
                explanations[-1] = value if explanations[-1] is None else explanations[-1] + "\n" + value
        elif key == "qx":
            match = _QX.fullmatch(value.strip())
            if match is None:
                raise RecordError(Reason.UNKNOWN_VALUE, f"{value!r} is not o<board> or c<board>", "qx")
            record.room = _ROOMS[match.group(1)]
            record.board = parse_count(match.group(2), INT32_MAX, "qx", "a board number")
        elif key == "md":
            if value not in deals:
                deals[value] = _parse_md(value)
            record.dealer, owner = deals[value]
            record.owner = None if owner is None else owner.copy()
        elif key == "sv":
            vulnerability = _VULNERABILITY.get(value.strip().lower())
            if vulnerability is None:
                raise RecordError(Reason.UNKNOWN_VALUE, f"{value!r} is not o, n, e or b", "sv")
            record.vulnerability = vulnerability
        elif key == "mc":
            record.claim = parse_count(value, INT8_MAX, "mc", "a number of tricks")
        elif key == "ah":
            match = _AH_BOARD.fullmatch(value)
            if match is not None and record.board is None:
                record.board = parse_count(match.group(1), INT32_MAX, "ah", "a board number")
            elif match is None or int(match.group(1)) != record.board:
                _add_tag(tags, key, value)
        elif key in _LAYOUT:
            if value.strip():
                _add_tag(tags, key, value)
        elif not state.apply(key, value):
            _add_tag(tags, key, value)
    if calls is not None:
        record.auction, record.alerts, record.explanations = calls, alerts, explanations
    record.event = state.event
    record.scoring = state.scoring
    record.players = state.players(record.room)
    if state.vg is not None:
        tags["vg"] = state.vg
    if state.names is not None and record.players is None:
        tags["pn"] = ",".join(state.names)
    result = state.result(record.board, record.room)
    if result:
        tags["rs"] = result
    record.tags = tags


def _check_dealer(record: BoardRecord, keys, values) -> None:
    """An auction needs a dealer, which LIN gives only as the first digit of md."""
    if record.auction is None or record.dealer is not None:
        return
    deals = [value.strip() for key, value in zip(keys, values) if key == "md"]
    if not deals:
        problem = "no md (no deal, no dealer)"
    elif not deals[-1]:
        problem = "md is empty (no deal, no dealer)"
    else:
        problem = "md's dealer digit is 0 (no dealer)"
    raise RecordError(Reason.UNKNOWN_VALUE, f"{problem}: the auction needs a dealer", "md")


def _parse_play(texts: list[str]) -> list[int]:
    play = [_CARDS.get(text) for text in texts]
    if None in play:
        for index, card in enumerate(play):
            if card is None:
                card = _CARDS.get(texts[index].strip())
                if card is None:
                    raise RecordError(Reason.BAD_CARD, f"{texts[index]!r} is not a card", f"pc[{index}]")
                play[index] = card
    return play


def _parse_other_call(token: str, index: int) -> int:
    try:
        return parse_call(token)
    except ValueError:
        raise RecordError(Reason.UNKNOWN_VALUE, f"{token!r} is not a call", f"mb[{index}]") from None


def _parse_md(value: str) -> tuple[int | None, np.ndarray | None]:
    """md value -> (dealer, owner). '' or '0' is no deal; a hand without cards counts as omitted."""
    value = value.strip()
    if not value:
        return None, None
    digit, rest = value[0], value[1:]
    if digit == "0":
        dealer = None
    elif digit in _DEALER_DIGITS:
        dealer = _DEALER_DIGITS[digit]
    else:
        raise RecordError(Reason.UNKNOWN_VALUE, f"dealer digit {digit!r} is not 1-4", "md")
    holdings = rest.split(",")
    if len(holdings) > 4:
        raise RecordError(Reason.SYNTAX, f"{len(holdings)} hands, at most 4", "md")
    hands: list[list[int] | None] = [None, None, None, None]
    for seat, holding in zip(_MD_SEATS, holdings):
        hands[seat] = _parse_holding(holding) or None
    if hands == [None, None, None, None]:
        return dealer, None
    return dealer, owner_from_hands(hands, "md")


def _parse_holding(holding: str) -> list[int]:
    """'S52HK2DAJ65CQJ874' (any suit order, ranks in any order and case, '10' for T) -> cards."""
    pieces = _SUIT_LETTER.split(holding.strip().replace("10", "T"))
    if pieces[0]:
        raise RecordError(Reason.BAD_CARD, f"{pieces[0]!r} before a suit letter in hand {holding!r}", "md")
    cards = []
    for letter, ranks in zip(pieces[1::2], pieces[2::2]):
        try:
            cards.extend(_suit_cards(letter, ranks))
        except KeyError as error:
            raise RecordError(Reason.BAD_CARD, f"{error.args[0]!r} in hand {holding!r}", "md") from None
    return cards


@lru_cache(maxsize=1 << 16)
def _suit_cards(letter: str, ranks: str) -> tuple[int, ...]:
    """One suit's cards; cached, as the same holdings recur over a corpus (KeyError: bad rank)."""
    base = 13 * _SUIT_OF_LETTER[letter]
    return tuple(base + _RANK_OF_CHAR[char] for char in ranks)


# ------------------------------------------------------------------------------------ writing

# Cards of each suit from the ace down, suits S, H, D, C: the order LIN hands are written in.
_WRITE_ORDER = [(letter, [suit * 13 + rank for rank in range(12, -1, -1)])
                for suit, letter in ((3, "S"), (2, "H"), (1, "D"), (0, "C"))]
_LIN_CARD = [SUITS[card // 13] + RANKS[card % 13] for card in range(52)]
_SCORING_LETTER = {name: letter for letter, name in _SCORING.items()}
_LIN_CALL = ["p", "d", "r"] + [call_name(call).replace("NT", "N") for call in range(3, 38)]


def format_lin(record: BoardRecord) -> str:
    """One board as a single LIN line (no newline) that `parse_lin` reads back to an equal
    record, also when several are written one per line: pn, md (always: it starts the board),
    vg (event and scoring only), sv, ah, mb/an, pc, mc. Room, tags and the stated contract are
    not written (contract and tricks follow from auction, play and claim). vg is file-level in
    LIN, so a board without event after one with an event reads back with the earlier event;
    a deal with exactly three known hands reads back with the fourth implied.
    Raises ValueError for text that LIN cannot carry ('|' in a value, ',' in a name)."""
    parts = []
    if record.players is not None:
        north, east, south, west = (_checked(name or "", "player name", ",") for name in record.players)
        parts.append(f"pn|{south},{west},{north},{east}|")
    if record.owner is None and record.dealer is None:
        parts.append("md||")  # always an md: it marks where the board starts
    else:
        digit = "0" if record.dealer is None else _DEALER_DIGIT_OF[record.dealer]
        hands = _md_hands(record.owner) if record.owner is not None else ""
        parts.append(f"md|{digit}{hands}|")
    if record.event is not None or record.scoring is not None:
        scoring = _SCORING_LETTER.get(record.scoring or "", record.scoring or "")
        parts.append(f"vg|{_checked(record.event or '', 'event', ',')},,{_checked(scoring, 'scoring', ',')}|")
    if record.vulnerability is not None:
        parts.append(f"sv|{_SV_OF[record.vulnerability]}|")
    if record.board is not None:
        parts.append(f"ah|Board {record.board}|")
    if record.auction:
        alerts = record.alerts or [False] * len(record.auction)
        explanations = record.explanations or [None] * len(record.auction)
        for call, alerted, explanation in zip(record.auction, alerts, explanations):
            parts.append(f"mb|{_LIN_CALL[call]}{'!' if alerted else ''}|")
            if explanation is not None:
                parts.append(f"an|{_checked(explanation, 'explanation')}|")
    if record.play:  # LIN cannot say a card was not played: its play ends before the first such card
        played = record.play[:record.play.index(NOT_PLAYED)] if NOT_PLAYED in record.play else record.play
        parts.append("".join(f"pc|{_LIN_CARD[card]}|" for card in played))
    if record.claim is not None:
        parts.append(f"mc|{record.claim}|")
    return "".join(parts)


def _checked(text: str, what: str, also_forbidden: str = "") -> str:
    for char in "|" + also_forbidden:
        if char in text:
            raise ValueError(f"LIN cannot write {char!r} inside a {what}: {text!r}")
    return text


def _md_hands(owner: np.ndarray) -> str:
    """'S...H...D...C...,...' for the hands S, W, N, E; a hand without cards is left empty."""
    seat_of = owner.tolist()
    pieces: list[list[str]] = [[], [], [], [], []]  # index 4 collects cards of unknown owner
    for letter, cards in _WRITE_ORDER:
        for seat in range(4):
            pieces[seat].append(letter)
        for card in cards:
            pieces[seat_of[card]].append(RANKS[card % 13])
    hands = []
    for seat in _MD_SEATS:
        text = "".join(pieces[seat])
        hands.append("" if text == "SHDC" else text)
    return ",".join(hands)
