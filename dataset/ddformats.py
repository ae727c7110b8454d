"""Loaders for the double-dummy oracle files (shared/data/oracle/README.md has every layout): DDS's
own regression lists, the GIB `sol` format and Xue's bridge-solver results.

Each loader yields, per deal in the file, a `BoardRecord` whose `dd_tricks` is already in our
layout ([declarer N,E,S,W][strain C,D,H,S,NT]; None where the source gives no value), or a
`Rejected` (a partial position with fewer than 52 cards is NOT_A_DEAL). Every source writes its
own cell order, so each has its explicit mapping here and nowhere else."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Sequence

from .dd import DDS_STRAIN
from .encodings import RANKS, card_index, parse_pbn_hand, seat_index
from .record import BoardRecord, Reason, RecordError, Rejected
from .validate import owner_from_hands

STRAIN_OF_LETTER = {"C": 0, "D": 1, "H": 2, "S": 3, "N": 4}  # macroxue rows name NT as "N"
DDS_TO_OUR_VUL = (0, 3, 1, 2)  # DDS: none, both, NS, EW -> ours: none=0, NS=1, EW=2, both=3
_GIB_STRAIN = (4, 3, 2, 1, 0)  # our strain -> GIB group (NT,S,H,D,C)
_GIB_DECLARER = (1, 0, 3, 2)  # our seat -> GIB position within a group (E,N,W,S)
_XUE_SEATS = (2, 0, 3, 1)  # macroxue columns S,N,W,E -> our seats
_HOLDING = re.compile(r"^(-|(10|[AKQJT98765432])+)$")
_SUIT_SYMBOLS = str.maketrans("♠♥♦♣", "    ")


def empty_table() -> list[int | None]:
    return [None] * 20


def load(path: str | Path, source_file: str | None = None) -> Iterator[BoardRecord | Rejected]:
    """Any oracle file or macroxue folder, by its layout."""
    path = Path(path)
    if path.is_dir():
        return load_macroxue_folder(path, source_file)
    head = path.read_text(encoding="utf-8").lstrip()[:200]
    if head.startswith("NUMBER"):
        return load_dds_list(path, source_file)
    if re.match(r"^\S+ \S+ \S+ \S+:[0-9A-Fa-f]{20}", head):
        return load_gib(path, source_file)
    return load_macroxue_results(path, source_file)


# ------------------------------------------------------------------ DDS hands/list*.txt

def load_dds_list(path: str | Path, source_file: str | None = None) -> Iterator[BoardRecord | Rejected]:
    """DDS `list*.txt`: a PBN line (dealer, DDS vul, trump, leader, deal) then FUT, TABLE (20 ints,
    strain-major S,H,D,C,NT, declarer N,E,S,W within), PAR, PAR2, PLAY, TRACE. PAR and PAR2 are
    kept verbatim in tags; PAR2's score is North-South's for the line's dealer and vulnerability."""
    source_file = source_file or str(path)
    entries: list[tuple[int, list[str]]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("PBN "):
            entries.append((number, []))
        if entries and line.strip():
            entries[-1][1].append(line.strip())
    for position, (line_number, lines) in enumerate(entries):
        record = BoardRecord(source_file, "dds_list", position, line_number, raw_text="\n".join(lines))
        try:
            _fill_dds_entry(record, lines)
        except (RecordError, ValueError) as error:
            yield _rejected(record, error, "PBN")
            continue
        yield record


def _fill_dds_entry(record: BoardRecord, lines: list[str]) -> None:
    fields = lines[0].split(None, 5)
    dealer, vul = int(fields[1]), int(fields[2])
    record.owner = _owner_from_pbn_deal(fields[5].strip().strip('"'))
    record.dealer, record.vulnerability = dealer, DDS_TO_OUR_VUL[vul]
    for line in lines[1:]:
        keyword, _, rest = line.partition(" ")
        if keyword == "TABLE":
            values = [int(value) for value in rest.split()]
            if len(values) != 20:
                raise RecordError(Reason.SYNTAX, f"TABLE with {len(values)} values", "TABLE")
            record.dd_tricks = [values[DDS_STRAIN[strain] * 4 + seat] for seat in range(4) for strain in range(5)]
        elif keyword in ("PAR", "PAR2"):
            record.tags[keyword] = rest.strip()


def _owner_from_pbn_deal(text: str):
    """'N:hand hand hand hand' (clockwise from the named seat) -> owner, checked."""
    first, _, hands_text = text.partition(":")
    hands_in_order = hands_text.split()
    if len(hands_in_order) != 4:
        raise RecordError(Reason.SYNTAX, f"deal {text!r} does not have 4 hands", "deal")
    start = seat_index(first)
    hands: list[list[int] | None] = [None] * 4
    for offset, hand in enumerate(hands_in_order):
        hands[(start + offset) % 4] = parse_pbn_hand(hand)
    return _full_deal(hands)


def _full_deal(hands: Sequence[Sequence[int]]):
    """Four hands -> owner; fewer than 52 cards in all is a position, not a deal."""
    cards = sum(len(hand) for hand in hands)
    if cards < 52:
        raise RecordError(Reason.NOT_A_DEAL, f"{cards} cards: a position, not a full deal", "deal")
    return owner_from_hands(hands)


def _rejected(record: BoardRecord, error: Exception, field: str) -> Rejected:
    if isinstance(error, RecordError):
        return record.reject(error.reason, error.message, error.field)
    return record.reject(Reason.SYNTAX, str(error), field)


# ------------------------------------------------------------------ GIB (DDS hands/sol10.txt)

def load_gib(path: str | Path, source_file: str | None = None) -> Iterator[BoardRecord | Rejected]:
    """GIB lines: hands W N E S (PBN S.H.D.C), ':', 20 hex digits grouped by strain NT,S,H,D,C,
    declarer E,N,W,S within, each the tricks North-South take."""
    source_file = source_file or str(path)
    position = 0
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = BoardRecord(source_file, "gib", position, number, raw_text=line)
        position += 1
        try:
            hands_text, _, digits = line.strip().rpartition(":")
            hands = [parse_pbn_hand(hand) for hand in hands_text.split()]
            if len(hands) != 4 or not re.fullmatch(r"[0-9A-Fa-f]{20}", digits):
                raise RecordError(Reason.SYNTAX, "expected 4 hands, ':' and 20 hex digits", "line")
            west, north, east, south = hands
            record.owner = _full_deal([north, east, south, west])
            ns_tricks = [int(digit, 16) for digit in digits]
            record.dd_tricks = [
                _declarer_tricks(seat, ns_tricks[_GIB_STRAIN[strain] * 4 + _GIB_DECLARER[seat]])
                for seat in range(4) for strain in range(5)
            ]
        except (RecordError, ValueError) as error:
            yield _rejected(record, error, "line")
            continue
        yield record


def _declarer_tricks(seat: int, ns_tricks: int) -> int:
    return ns_tricks if seat % 2 == 0 else 13 - ns_tricks


# ------------------------------------------------------------------ macroxue bridge-solver

def parse_holding(token: str, suit: int) -> list[int]:
    """'KQ92', 'A10', 'AT' or '-' (void) in one suit (C,D,H,S = 0..3) -> card indices."""
    if token == "-":
        return []
    ranks = token.upper().replace("10", "T")
    if not _HOLDING.match(token.upper()):
        raise RecordError(Reason.BAD_CARD, f"{token!r} is not a holding", "deal")
    return [card_index(suit, RANKS.index(rank)) for rank in ranks]


def diagram_holdings(lines: Sequence[str]) -> list[str]:
    """The holding tokens of a hand diagram, in reading order (suit symbols and seat labels,
    trump and leader lines dropped)."""
    tokens = []
    for line in lines:
        tokens += [token for token in line.translate(_SUIT_SYMBOLS).split() if _HOLDING.match(token.upper())]
    return tokens


def parse_diagram(lines: Sequence[str]) -> list[list[int]]:
    """A macroxue diagram (N on top, then W and E, on one line or two, then S; holdings S H D C)
    -> four hands N, E, S, W. Hands may be short (an endgame position); a caller that needs a
    deal checks it with `_full_deal` or `dd.check_deal`."""
    tokens = diagram_holdings(lines)
    cards = sum(len(token.replace("10", "T")) for token in tokens if token != "-")
    if len(tokens) != 16:
        if cards < 52:
            raise RecordError(Reason.NOT_A_DEAL, f"{cards} cards in {len(tokens)} holdings: a position, not a deal", "deal")
        raise RecordError(Reason.SYNTAX, f"{len(tokens)} holdings, not 16", "deal")
    hands = []
    for holder in range(4):  # reading order N, W, E, S
        hand = []
        for offset, suit in enumerate((3, 2, 1, 0)):
            hand += parse_holding(tokens[holder * 4 + offset], suit)
        hands.append(hand)
    north, west, east, south = hands
    return [north, east, south, west]


def _row_cells(table: list[int | None], letter: str, values: Sequence[str]) -> None:
    """A macroxue row `<strain> tS tN tW tE` into our table."""
    strain = STRAIN_OF_LETTER[letter]
    for column, value in enumerate(values[:4]):
        table[_XUE_SEATS[column] * 5 + strain] = int(value)


_ROW = re.compile(r"^\s*([NSHDC])\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\b")


def load_macroxue_results(path: str | Path, source_file: str | None = None) -> Iterator[BoardRecord | Rejected]:
    """`comparison/results.5k_deals.txt`: a 3-line diagram, 5 rows `<strain> tS tN tW tE time mem`,
    then timing lines."""
    source_file = source_file or str(path)
    diagram: list[str] = []
    rows: list[re.Match] = []
    start_line = position = 0
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines + [""], start=1):
        row = _ROW.match(line)
        if row:
            rows.append(row)
            continue
        if rows and (not line.strip() or "♠" in line or number > len(lines)):
            yield _macroxue_record(source_file, position, start_line, diagram, rows)
            position += 1
            diagram, rows = [], []
        if "♠" in line:
            if not diagram:
                start_line = number
            diagram.append(line)


def _macroxue_record(source_file, position, line, diagram, rows) -> BoardRecord | Rejected:
    raw = "\n".join(diagram + [row.string for row in rows])
    record = BoardRecord(source_file, "macroxue", position, line, raw_text=raw)
    try:
        record.owner = _full_deal(parse_diagram(diagram))
    except RecordError as error:
        return _rejected(record, error, "deal")
    table = empty_table()
    for row in rows:
        _row_cells(table, row.group(1), row.groups()[1:])
    record.dd_tricks = table
    return record


def load_macroxue_folder(folder: str | Path, source_file: str | None = None) -> Iterator[BoardRecord | Rejected]:
    """A folder of `deal.N` / `squeeze.N` diagram files with a `RESULTS` file: a file name line,
    then up to 5 rows `<strain> tS tN tW tE`. One record per RESULTS entry, in its order."""
    folder = Path(folder)
    prefix = source_file or str(folder)
    entries: list[tuple[str, int, list[str]]] = []
    for number, line in enumerate((folder / "RESULTS").read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = _ROW.match(line)
        if row:
            entries[-1][2].append(line)
        else:
            entries.append((line.strip(), number, []))
    for position, (name, _, rows) in enumerate(entries):
        text = (folder / name).read_text(encoding="utf-8")
        record = BoardRecord(f"{prefix}/{name}", "macroxue", position, 1, raw_text=text)
        try:
            record.owner = _full_deal(parse_diagram(text.splitlines()))
        except RecordError as error:
            yield _rejected(record, error, "deal")
            continue
        table = empty_table()
        for line in rows:
            row = _ROW.match(line)
            _row_cells(table, row.group(1), row.groups()[1:])
        record.dd_tricks = table
        yield record


__all__ = [
    "load", "load_dds_list", "load_gib", "load_macroxue_results", "load_macroxue_folder",
    "parse_diagram", "parse_holding", "diagram_holdings", "DDS_TO_OUR_VUL",
]
