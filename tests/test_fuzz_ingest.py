"""Keep it fixed (issue 15): real files from ../shared/data/real, mutated with a fixed seed, all
ingested by ONE ingest job next to their clean originals. Per file (`mutations`): truncations, byte
flips (random values, 0x81 and 0x9D, and next to a LIN `qx|` or a PBN tag line), inserted and
replacing NUL bytes, one broken board in the middle, a duplicated board, other line endings (CRLF,
CR, LF), UTF-16 LE/BE and UTF-8 with a BOM, and UTF-8, cp1252 and latin-1 for files with non-ASCII
text; and (issue 38) a byte order mark at the start of a board's line, a zero-width space, a PBN
comment closed by ']', a number in other digits ('²', '¹⁰') or too large for its column, a '-' in
[Play], a junk line before a LIN board, an upper-case QX, PBN tag names in other cases, and the file
concatenated with itself (as is, after a BOM, with an error page between LIN copies), plus a
named pipe among the files (skipped, never opened) (from 8 sources, about 370 files; the whole test
takes about 20 s on two busy cores).

Per mutated file: the run completes; the manifest says read = accepted + quarantined; the shards
(records/, quarantine/) hold exactly the manifest's counts per file, by reason; and every board of
the clean file that the mutation did not touch is still accepted with the same content (`content`:
the game, not its position, line, record id or raw text), compared as multisets since a mutation
may shift positions.

Which boards a mutation touches is decided from the clean run: board i spans the lines from its
source_line to the line before board i+1's (the first board from line 1, the last to the end of the
file); a mutation at line L touches every board whose span meets lines L-1..L+1. A LIN file's header
(the lines before its first board: vg, rs, pn) holds values of every board, so a mutation there
touches them all; no board depends on another otherwise (no PBN source copies tags from game to
game with '#' or inherits board tags as rpbridge.net's tables do). A truncation also drops the
boards after its line. A duplicated board touches none (the copy is one more board); whole-file
mutations (encodings, line endings, tag-name case, concatenation) touch none, and there the accepted
boards must equal the clean file's by position and content (each copy's after the one before; the
board after a BOM between copies lists the repair) and the quarantine reasons the clean file's."""

from __future__ import annotations

import codecs
import os
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from bridgeflow.dataset.record import Repair
from bridgeflow.pipelines import ingest

SEED = 15
SOURCES = [  # small real files of every kind, below real/
    "lorserker_ben_pbn/Boards/BBO/Ben & Friends Daily - 2024-08-05 Daylong.pbn",  # BBO results, full play
    "valet_wbf_ebl_handrecords/data/2023-Training/handrecords/set1.pbn",  # hand records, non-ASCII
    "timheilman_pbn_conformance/three_test_records_crlf.pbn",  # CRLF, comments
    "zdenecek_pbn_samples/bridgecomposer.pbn",  # cp1250 (Czech), hand records with DD tables
    "bbo_vugraph_alphabridge/raw_lin_data/423/42300.lin",  # vugraph, CRLF, boards over several lines
    "bbo_vugraph_alphabridge/raw_lin_data/443/44383.lin",  # vugraph, non-ASCII header
    "bbo_vugraph_alphabridge/raw_lin_data/430/43041.lin",  # vugraph, LF, a board per line (two on one)
    "jarekczek_pbntools_tests/test/test_8_bbo_wronie_20130824/Wronie_9533_Pairs_2720_PRZYJACIELE_WRONIA/28189584.lin",
]
# What is compared of an accepted board: what happened at the table, not where it was read.
CONTENT = ("deal", "dealer", "vulnerability", "board", "event", "site", "date", "room", "scoring", "players",
           "auction", "alerts", "explanations", "auction_complete", "contract", "declarer", "tricks", "claim",
           "play", "score_ns", "source_score", "dd_tricks", "tags", "repairs")
HIGH_BYTES = (0x81, 0x9D)  # undefined in cp1252: the bytes that once killed the run
DROPPED = Repair.INVISIBLE_CHARACTER_DROPPED.value
# Damage inside one board (issue 38) -> the reason it is quarantined with; None: it costs nothing at
# all (the board is read as in the clean file, the junk line is one record of its own).
ONE_BOARD = {"odd_digit": "unknown_value", "huge_number": "unknown_value", "odd_result": "unknown_value",
             "wrong_bracket": "syntax", "upper_case_key": None, "junk_line": None, "bom_line": None,
             "zero_width": None}


@dataclass
class Case:
    name: str  # the mutated file's name in the input folder
    source: str  # the clean file's name
    kind: str
    data: bytes
    line: int | None = None  # the clean file's line the mutation is at; None = the whole file
    truncated: bool = False
    copies: int = 1  # a whole-file mutation holding the clean file this many times (concatenated)
    junk: int = 0  # records of text that is not LIN between the copies


def freeze(value):
    if isinstance(value, list):
        return tuple(freeze(item) for item in value)
    return value


def content(row: dict) -> tuple:
    return tuple(freeze(row[name]) for name in CONTENT)


def line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def mutations(name: str, data: bytes, starts: list[int], rng: random.Random) -> list[Case]:
    """The mutated copies of one clean file (`starts`: its boards' first lines, from the clean run)."""
    stem, ext = name.rsplit(".", 1)
    cases: list[Case] = []

    def add(kind: str, mutated: bytes, offset: int | None = None, truncated: bool = False, copies: int = 1,
            junk: int = 0):
        line = None if offset is None else line_of(data, offset)
        cases.append(Case(f"{stem}-{kind}-{len(cases):02d}.{ext}", name, kind, mutated, line, truncated, copies, junk))

    def insert(kind: str, offset: int, text: bytes):
        add(kind, data[:offset] + text + data[offset:], offset)

    def replace(kind: str, match: re.Match | None, group: int, text: bytes):
        if match is not None:
            add(kind, data[:match.start(group)] + text + data[match.end(group):], match.start(group))

    def flip(kind: str, offset: int, byte: int):
        add(kind, data[:offset] + bytes([byte]) + data[offset + 1:], offset)

    for _ in range(5):
        offset = rng.randrange(1, len(data))
        add("truncate", data[:offset], offset, truncated=True)
    for _ in range(10):
        flip("flip", rng.randrange(len(data)), rng.randrange(256))
    for byte in HIGH_BYTES:
        for _ in range(3):
            flip(f"flip_{byte:02x}", rng.randrange(len(data)), byte)
    # next to what starts a board or a tag: the byte before a LIN qx (the board before's) and the
    # first byte of its value; a PBN tag line's '[' and the byte two before it, the line break that
    # ends the game before where an empty line precedes the tag (a NUL there once cost both games)
    keys = [m.start() for m in re.finditer(rb"qx\|", data)] if ext == "lin" else \
           [m.start() + 1 for m in re.finditer(rb"\n\[", data)]
    for at in rng.sample(keys, min(3, len(keys))):
        for offset in ((at - 1, at + 3) if ext == "lin" else (at - 2, at)):
            if 0 <= offset < len(data):
                game_end = ext == "pbn" and offset == at - 2
                flip("flip_key", offset, 0x00 if game_end else rng.choice(HIGH_BYTES + (0xFF, ord("|"), ord("]"))))
    for _ in range(2):
        offset = rng.randrange(len(data))
        add("nul_insert", data[:offset] + b"\x00" + data[offset:], offset)
        offset = rng.randrange(len(data))
        add("nul_replace", data[:offset] + b"\x00" + data[offset + 1:], offset)

    lines = data.splitlines(keepends=True)
    middle = len(starts) // 2
    if starts:
        first = starts[middle] - 1
        last = starts[middle + 1] - 1 if middle + 1 < len(starts) else len(lines)
        board = b"".join(lines[first:max(last, first + 1)])
        at = len(b"".join(lines[:first]))
        deal = re.search(rb'\[Deal "[NESW]:|md\|\d', board)
        if deal is not None:  # a card that does not exist in the middle board's deal
            broken = board[:deal.end()] + b"Z" + board[deal.end():]
            add("broken_board", data[:at] + broken + data[at + len(board):], at + deal.end())
        add("duplicate_board", data[:at + len(board)] + board + data[at + len(board):])
        # files concatenated, damage in one board's numbers, text between boards (issue 38)
        if at:  # (at the start of the file it is the file's byte order mark)
            insert("bom_line", at, codecs.BOM_UTF8)
        second_line = at + board.index(b"\n") + 1 if b"\n" in board[:-1] else at
        if ext == "pbn":
            insert("zero_width", second_line + 1, "\u200b".encode())
            insert("wrong_bracket", second_line, b"{a note closed by the wrong bracket]\n[Room \"Open\"]\n{later}\n")
            number = re.compile(rb'\[Board "(\d+)"\]')
            for kind, text in (("odd_digit", "\u00b2".encode()), ("huge_number", b"3000000000")):
                replace(kind, number.search(data, at), 1, text)
            replace("odd_result", re.compile(rb'\[Result "(\d+)"\]').search(data, at), 1, "\u00b9\u2070".encode())
            play = re.compile(rb'\[Play "[NESW]"\]\r?\n([SHDC][2-9TJQKA])').search(data, at)
            replace("dash_in_play", play or re.compile(rb'\[Play "[NESW]"\]\r?\n([SHDC][2-9TJQKA])').search(data),
                    1, b"-")
        else:
            board_start = data.find(b"qx|", at, at + len(board))
            insert("junk_line", at if board_start < 0 else board_start, b"This is not LIN\n")
            qx = re.compile(rb"qx\|[oc](\d+)").search(data, at)
            for kind, text in (("odd_digit", "\u00b2".encode()), ("huge_number", b"3000000000")):
                replace(kind, qx, 1, text)
            replace("upper_case_key", qx, 0, b"QX" + qx.group(0)[2:] if qx else b"")

    if ext == "pbn":  # tag names in other cases: read as the standard's
        add("tag_case", re.sub(rb"^\[(Deal|Board|Auction|Dealer|Vulnerable|Play|Contract|Declarer|Result) ",
                               lambda match: b"[" + (match.group(1).lower() if len(match.group(1)) % 2 else
                                                     match.group(1).upper()) + b" ", data, flags=re.M))
    add("concatenated", data + data, copies=2)  # no empty line between: the games still part
    add("concatenated_bom", data + b"\n" + codecs.BOM_UTF8 + data, copies=2)
    if ext == "lin":
        add("concatenated_error", data + b"\n<html><body>502 Bad Gateway</body></html>\n" + data, copies=2, junk=1)

    encoding = "utf-8" if data.isascii() or is_utf8(data) else "cp1250"  # the Czech BridgeComposer file
    text = data.decode(encoding)
    plain = text.replace("\r\n", "\n")
    for kind, ending in (("crlf", "\r\n"), ("cr", "\r"), ("lf", "\n")):
        if plain.replace("\n", ending) != text:
            add(kind, plain.replace("\n", ending).encode(encoding))
    add("utf16_le_bom", codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    add("utf16_be_bom", codecs.BOM_UTF16_BE + text.encode("utf-16-be"))
    add("utf8_bom", codecs.BOM_UTF8 + text.encode("utf-8"))
    for other in ("utf-8", "cp1252", "latin-1"):
        if other != encoding and not text.isascii():
            add(other, text.encode(other))
    return cases


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def rows_by_file(folder: Path) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for shard in sorted(folder.glob("*.parquet")):
        for row in pq.read_table(shard).to_pylist():
            rows.setdefault(row["source_file"], []).append(row)
    return rows


def touched(case: Case, starts: list[int], total_lines: int, lin: bool) -> set[int]:
    """Indexes (into `starts`) of the clean boards `case` may have changed or dropped (see the module
    docstring)."""
    if case.line is None:
        return set()
    if lin and starts and case.line < starts[0]:
        return set(range(len(starts)))
    hit = set()
    for index, start in enumerate(starts):
        first = 1 if index == 0 else start
        last = max(start, starts[index + 1] - 1) if index + 1 < len(starts) else total_lines
        if first <= case.line + 1 and last >= case.line - 1:
            hit.add(index)
        if case.truncated and last > case.line + 1:
            hit.add(index)
    return hit


def test_mutated_real_files_in_one_run(real_data, tmp_path):
    rng = random.Random(SEED)
    inputs = tmp_path / "in"
    (inputs / "clean").mkdir(parents=True)
    clean_data = {}
    for number, source in enumerate(SOURCES):
        name = f"s{number}.{source.rsplit('.', 1)[1]}"
        clean_data[name] = (real_data / source).read_bytes()
        (inputs / "clean" / name).write_bytes(clean_data[name])
    clean = ingest.run(["--input", str(inputs / "clean"), "--out", str(tmp_path / "clean"),
                        "--runner", "FnApiRunner", "--workers", "1"])
    clean_records = rows_by_file(tmp_path / "clean" / "records")
    clean_quarantine = rows_by_file(tmp_path / "clean" / "quarantine")

    cases: list[Case] = []
    boards: dict[str, list[tuple[int, tuple | None]]] = {}  # clean file -> (first line, content or None)
    for name, data in clean_data.items():
        path = str(inputs / "clean" / name)
        assert clean["per_file"][path]["read"] > 0, name
        items = [(row["source_position"], row["source_line"], content(row)) for row in clean_records.get(path, [])]
        items += [(row["source_position"], row["source_line"], None) for row in clean_quarantine.get(path, [])]
        boards[name] = [(line, key) for _, line, key in sorted(items)]
        cases += mutations(name, data, [line for line, _ in boards[name]], rng)
    for case in cases:
        (inputs / case.name).write_bytes(case.data)
    assert len(cases) >= 250
    fifo = inputs / "fifo.pbn"  # a named pipe among the files: skipped, never waited on
    os.mkfifo(fifo)

    out = tmp_path / "out"
    manifest = ingest.run(["--input", str(inputs), "--out", str(out), "--runner", "FnApiRunner", "--workers", "1"])
    records, quarantine = rows_by_file(out / "records"), rows_by_file(out / "quarantine")
    failures = []
    for case in [Case(f"clean/{name}", name, "clean", data) for name, data in clean_data.items()] + cases:
        path = str(inputs / case.name)
        entry = manifest["per_file"][path]
        accepted, rejected = records.get(path, []), quarantine.get(path, [])
        assert entry["read"] == entry["accepted"] + sum(entry["quarantined"].values()), case.name
        assert len(accepted) == entry["accepted"], case.name
        assert Counter(row["reason"] for row in rejected) == Counter(entry["quarantined"]), case.name
        assert sorted(row["source_position"] for row in accepted + rejected) == list(range(entry["read"])), case.name

        clean_boards = boards[case.source]
        lines = clean_data[case.source].count(b"\n") + 1
        hit = touched(case, [line for line, _ in clean_boards], lines, case.name.endswith(".lin"))
        if case.kind in ONE_BOARD:  # the damage costs the board it is in, and only as ONE_BOARD says
            board = max(index for index, (line, _) in enumerate(clean_boards) if line <= case.line)
            hit = {board} if ONE_BOARD[case.kind] else set()
            reason = ONE_BOARD[case.kind]
            if reason and not any((row["source_position"], row["reason"]) == (board, reason) for row in rejected):
                failures.append(f"{case.name} ({case.kind} at line {case.line}): board {board} not quarantined "
                                f"as {reason}: {[(row['source_position'], row['reason']) for row in rejected]}")
            if case.kind == "junk_line" and Counter(row["reason"] for row in rejected)["unknown_format"] != 1:
                failures.append(f"{case.name} (junk_line): the junk is not one unknown_format record")
        marked = [row for row in accepted if DROPPED in (row["repairs"] or [])]
        if case.kind in ("bom_line", "zero_width"):  # the board of the line lists the repair
            if not marked:
                failures.append(f"{case.name} ({case.kind} at line {case.line}): no record lists {DROPPED}")
            for row in marked:
                row["repairs"] = [repair for repair in row["repairs"] if repair != DROPPED] or None
        kept = Counter(key for index, (_, key) in enumerate(clean_boards) if key is not None and index not in hit)
        lost = kept - Counter(content(row) for row in accepted)
        if lost:
            failures.append(f"{case.name} ({case.kind} at line {case.line}): {sum(lost.values())} untouched "
                            f"board(s) not accepted as in the clean file; quarantined: "
                            f"{[(row['source_line'], row['reason'], row['message']) for row in rejected]}")
        if case.line is None and case.kind != "duplicate_board":  # a whole-file mutation: nothing may change
            # each copy's boards where the clean file has them, the copies' positions one after the other
            clean_path = str(inputs / "clean" / case.source)
            read = manifest["per_file"][clean_path]["read"]
            by_position = {(copy * (read + case.junk) + row["source_position"], content(row))
                           for row in clean_records.get(clean_path, []) for copy in range(case.copies)}
            for row in marked:  # the record after a byte order mark between the copies lists it
                row["repairs"] = [repair for repair in row["repairs"] if repair != DROPPED] or None
            same_accepted = {(row["source_position"], content(row)) for row in accepted} == by_position and len(
                marked) <= (case.kind == "concatenated_bom")
            clean_reasons = Counter(row["reason"] for row in clean_quarantine.get(clean_path, []))
            same_reasons = Counter(row["reason"] for row in rejected) == Counter(
                {reason: count * case.copies for reason, count in clean_reasons.items()}) + Counter(
                {"unknown_format": case.junk} if case.junk else {})
            if not (same_accepted and same_reasons and entry["read"] == case.copies * read + case.junk):
                failures.append(f"{case.name} ({case.kind}): not read as the clean file: "
                                f"{[(row['source_line'], row['reason'], row['message']) for row in rejected]}")
    assert not failures, "\n".join(failures)
    assert manifest["skipped_files"] == [{"file": str(fifo), "why": "not a regular file: a FIFO (named pipe)"}]
    kinds = Counter(case.kind for case in cases)
    assert manifest["files"] == len(cases) + len(clean_data), kinds
