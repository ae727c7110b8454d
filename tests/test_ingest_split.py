"""Large PBN files are parsed in pieces cut between games (pbn.range_starts): each piece reads the
records a whole-file parse reads there, '#'/'##' state, comments and positions included, so a
split run writes the bytes an unsplit run writes."""

from __future__ import annotations

import pytest

from bridgeflow.dataset import pbn, schema
from bridgeflow.dataset.record import BoardRecord, Rejected
from bridgeflow.dataset.validate import check
from bridgeflow.pipelines import ingest

from test_ingest import count_chunks, ingest_argv, kill_after, output

DEAL = "AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 654.8765.876.876 32.432.5432.5432"

# Every construct that carries state from game to game or could hide a game break.
TRICKY = f"""% PBN 2.1
{{ a file comment

with an empty line inside }}
[Event "##Club night"]
[Site "Club"]
[Board "1"]
[West "Ann"]
[Dealer "N"]
[Vulnerable "None"]
[Deal "N:{DEAL}"]
[Declarer "N"]
[Contract "3NT"]
[Result "9"]
{{ commentary over
two lines }}

[West "Bob"]
[Declarer "S"]
[Contract "4H"]
[Result "10"]

[Event "#"]
[West "#"]
[Board "2"]
[Dealer "E"]
[Vulnerable "NS"]
[Deal "E:{DEAL}"]
; a {{ brace in a line comment

[Board "3"]
[Dealer "#"]
[Deal "S:{DEAL}"]
{{ a comment that is never closed

[Board "4"]
[Site "##"]
[Deal "W:{DEAL}"]
[Board "5"]
[Deal "N:{DEAL}"]

text before the first tag
[Board "6"]
[Deal "E:{DEAL}"]

[Board "7"]\r
[Deal "S:{DEAL}"]\r
[Note "a NUL \x00 here"]\r
\r
[Board "8"]\r
[Deal "W:{DEAL}"]\r
{{ a comment

that goes on after an empty line }}
[Result "?"]

%% an escape line between games

[Event "Other"]
[Site "#"]
[Board "9"]
[Dealer "W"]
[Deal "W:{DEAL}"]
[Auction "W"]
1C Pass 1H Pass
3NT Pass Pass Pass

"""


def rows(items, first_position: int = 0, first_line: int = 1) -> list[tuple[str, dict]]:
    """What ingest writes for each record of `items`, positions and lines moved to the file's."""
    written = []
    for item in items:
        item.source_position += first_position
        item.source_line += first_line - 1
        if isinstance(item, BoardRecord):
            item = check(item)
        if isinstance(item, Rejected):
            written.append(("quarantine", schema.quarantine_row(item, 0)))
        else:
            written.append(("records", schema.records_row(item, 0)))
    return written


def pieces(data: bytes, every: int, block: int) -> list[tuple[int, int, int, int, dict | None]]:
    """(start, end, first line, first position, carried) of each piece range_starts cuts."""
    starts = pbn.range_starts([data[i:i + block] for i in range(0, len(data), block)], every)
    ends = [start for start, *_ in starts] + [len(data)]
    return [(start, end, line, position, carried)
            for (start, line, position, carried), end in zip([(0, 1, 0, None)] + starts, ends)]


def test_pieces_read_what_the_whole_file_reads():
    data = (TRICKY * 3).encode()
    whole = rows(pbn.parse_pbn(data, "f.pbn"))
    assert {"records", "quarantine"} == {kind for kind, _ in whole}
    cut_before = set()
    for every in range(1, len(data) // 2, 37):
        for block in (5, 1 << 20):  # blocks that end anywhere, or one block
            cut = pieces(data, every, block)
            split = []
            for start, end, line, position, carried in cut:
                split += rows(pbn.parse_pbn(data[start:end], "f.pbn", carried), position, line)
                cut_before.add(data[start:start + 11])
            assert split == whole, (every, block)
    assert len(pieces(data, 1, 5)) > 10
    # cuts fall where state is carried ('##' Event, '#' West), never before a game inheriting board tags
    assert any(carried and carried["shared"] for *_, carried in pieces(data, 1, 5))
    assert b'[West "Bob"' not in cut_before and b'[Board "5"]' not in cut_before


@pytest.mark.parametrize("data", [
    TRICKY.encode("latin-1").replace(b"Club", b"Caf\xe9", 1),  # not UTF-8: decoded game by game
    b"\xff\xfe" + TRICKY.encode("utf-16-le"),  # a UTF-16 byte order mark
    TRICKY.replace("\n", "\r").encode(),  # CR-only line ends
], ids=["latin-1", "utf-16", "cr"])
def test_files_read_whole_are_not_cut(data):
    assert pbn.range_starts([data[i:i + 1000] for i in range(0, len(data), 1000)], 1000) == []


def test_a_file_without_empty_lines_is_not_held_whole_to_find_a_cut():
    game = f'[Board "1"]\n[Deal "N:{DEAL}"]\n'.encode()
    blocks = iter(lambda: game * 10_000, None)  # endless: range_starts must give up on its own
    assert pbn.range_starts(blocks, 1000) == []


def test_a_split_run_writes_the_bytes_of_an_unsplit_one(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "big.pbn").write_text(TRICKY * 20)
    (inputs / "small.pbn").write_text(TRICKY)
    chunks, _ = ingest.plan_inputs([str(inputs)], 2000)
    assert len([chunk for chunk in chunks if chunk.relative_path == "big.pbn"]) > 5
    assert any(chunk.carried for chunk in chunks)
    runs = {}
    for split_bytes in (2000, 1 << 30):
        out = tmp_path / f"out-{split_bytes}"
        manifest = ingest.run(["--input", str(inputs), "--out", str(out), "--workers", "2",
                               "--rows-per-shard", "50", "--split-bytes", str(split_bytes)])
        assert manifest["read"] == 21 * 10 and manifest["accepted"] > 21 * 4
        runs[split_bytes] = output(out)
    assert runs[2000] == runs[1 << 30]


def test_a_killed_split_run_resumes_to_the_bytes_of_an_unsplit_one(tmp_path, monkeypatch):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "big.pbn").write_text(TRICKY * 10)
    whole = ingest_argv(inputs, tmp_path / "whole")
    ingest.run(whole[:whole.index("--split-bytes") + 1] + [str(1 << 30)] + whole[whole.index("--split-bytes") + 2:])
    kill_after(monkeypatch, inputs, tmp_path / "out", 3)  # pieces of about 600 bytes
    parsed = count_chunks(monkeypatch)
    ingest.run(ingest_argv(inputs, tmp_path / "out"))
    assert len(parsed) == len(ingest.plan_inputs([str(inputs)], 600)[0]) - 3 > 5
    monkeypatch.undo()
    assert output(tmp_path / "out") == output(tmp_path / "whole")


def test_a_large_file_read_whole_is_planned_as_one_chunk(tmp_path):
    path = tmp_path / "cafe.pbn"
    path.write_bytes((TRICKY * 5).encode("latin-1").replace(b"Club", b"Caf\xe9"))
    chunks, _ = ingest.plan_inputs([str(path)], 100)
    assert chunks == [ingest.InputChunk(str(tmp_path), "cafe.pbn", str(path), "pbn", path.stat().st_size,
                                        path.stat().st_mtime_ns)]
