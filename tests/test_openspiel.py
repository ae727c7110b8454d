"""The OpenSpiel trajectory reader and writer, on the real WBridge5 test split and on bad lines.

Card ids are 4 * rank + suit (suit C,D,H,S = 0..3); expected values below were decoded by hand
from that rule, not with the code under test."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bridgeflow.dataset.encodings import E, N, S, W, owner_from_hands, parse_call, parse_card, parse_pbn_hand
from bridgeflow.dataset.openspiel import format_openspiel, looks_like_openspiel, parse_openspiel
from bridgeflow.dataset.record import BoardRecord, Reason, Rejected
from bridgeflow.dataset.validate import check

FIRST_LINE_START = "27 46 36 43 18 22 0 20 24 2 40 41 28 16 21 10 42 32 48 47 13 17 3 5 12 25 34 8 29 38 23 4 30 26"


@pytest.fixture(scope="module")
def test_split(real_data) -> bytes:
    return (real_data / "openspiel_wbridge5_bidding" / "test.txt").read_bytes()


def test_first_line_decoded_by_hand(test_split):
    record = next(parse_openspiel(test_split, "test.txt"))
    assert record.raw_text.startswith(FIRST_LINE_START)
    # ids 27, 18, 24, 28, ... go to North: 27 = 4*6+3 = S8, 18 = 4*4+2 = H6, 24 = 4*6+0 = C8 ...
    hands = {N: "J8.Q965.A954.985", E: "9.KJ872.T862.KT6", S: "T7432.T3.K7.AQJ2", W: "AKQ65.A4.QJ3.743"}
    assert np.array_equal(record.owner, owner_from_hands([parse_pbn_hand(hands[seat]) for seat in (N, E, S, W)]))
    assert (record.dealer, record.vulnerability, record.source_format) == (N, 0, "openspiel")
    # 52 52 58 59 52 61 52 62 52 64 52 52 52: P P 1S 1NT P 2D P 2H P 2NT P P P
    assert record.auction == [parse_call(c) for c in "P P 1S 1NT P 2D P 2H P 2NT P P P".split()]
    assert record.play[:8] == [parse_card(c) for c in "SJ S9 S2 SK DQ D5 D2 DK".split()]
    assert len(record.play) == 52
    checked = check(record)
    assert (checked.contract_level, checked.contract_strain, checked.declarer) == (2, 4, W)
    assert 0 <= checked.tricks <= 13


def test_whole_test_split_is_accepted(test_split):
    counts = Counter()
    for line_number, item in enumerate(parse_openspiel(test_split, "test.txt"), start=1):
        assert isinstance(item, BoardRecord), str(item)
        assert (item.source_position, item.source_line) == (line_number - 1, line_number)
        checked = check(item)
        assert isinstance(checked, BoardRecord), str(checked)
        counts["records"] += 1
        counts["passed out"] += checked.contract_level == 0
        counts["full play"] += len(checked.play or ()) == 52
        (again,) = parse_openspiel(format_openspiel(item).encode(), "again.txt")
        assert np.array_equal(again.owner, item.owner) and (again.auction, again.play) == (item.auction, item.play)
    assert counts == {"records": 10_000, "passed out": 39, "full play": 9_961}  # SOURCES.md section 5


def test_looks_like_openspiel(test_split, real_data):
    assert looks_like_openspiel(test_split[:4096])
    assert looks_like_openspiel(test_split[:200])  # cut inside the first line
    assert not looks_like_openspiel(test_split[:60])  # fewer than 52 ids visible
    pbn = next((real_data / "zdenecek_pbn_samples").glob("*.pbn")).read_bytes()
    lin = (real_data / "forrestrice_bridgebots_samples" / "sample.lin").read_bytes()
    assert not looks_like_openspiel(pbn[:4096]) and not looks_like_openspiel(lin[:4096])
    assert not looks_like_openspiel(b" ".join(b"1" for _ in range(60)) + b"\n")  # not a deal
    assert not looks_like_openspiel(b"")


DEAL = " ".join(str(i) for i in range(52))


@pytest.mark.parametrize(
    ("line", "reason", "field"),
    [
        ("hello world", Reason.UNKNOWN_FORMAT, "line"),
        (DEAL + " 52 x", Reason.UNKNOWN_FORMAT, "line"),
        (DEAL + " 90", Reason.UNKNOWN_VALUE, "action[52]"),
        (" ".join(str(i) for i in range(30)), Reason.NOT_A_DEAL, "action[30]"),
        (" ".join(str(i) for i in range(20)) + " 52 52", Reason.NOT_A_DEAL, "action[20]"),
        (DEAL.replace(" 51", " 50"), Reason.DUPLICATE_CARD, "deal"),
        (DEAL + " 52 52 52 52 3 53", Reason.UNKNOWN_VALUE, "action[57]"),
        ("-1 " + DEAL, Reason.UNKNOWN_FORMAT, "line"),
    ],
)
def test_bad_lines_are_rejected(line, reason, field):
    (item,) = parse_openspiel(line.encode(), "bad.txt")
    assert isinstance(item, Rejected) and (item.reason, item.field) == (reason, field)
    assert item.raw_text == line and item.message


def test_blank_lines_are_not_records_and_crlf_is_read():
    data = f"\r\n{DEAL} 52 52 52 52\r\n\r\nnot a trajectory\r\n{DEAL}".encode()
    first, second, third = parse_openspiel(data, "f.txt")
    assert (first.source_position, first.source_line, first.auction) == (0, 2, [0, 0, 0, 0])
    assert (second.source_position, second.source_line, second.reason) == (1, 4, Reason.UNKNOWN_FORMAT)
    assert (third.source_position, third.source_line, third.auction, third.play) == (2, 5, None, None)
    # ids 0..51 in order: player i % 4 gets ids i, i+4, ...; id 0 = C2 goes to North, id 1 = D2 to East.
    assert first.owner[parse_card("C2")] == N and first.owner[parse_card("D2")] == E
    assert first.owner[parse_card("H2")] == S and first.owner[parse_card("SA")] == W


def test_format_openspiel_refuses_what_it_cannot_carry():
    record = next(parse_openspiel(DEAL.encode(), "f"))
    record.dealer = E
    with pytest.raises(ValueError):
        format_openspiel(record)
    with pytest.raises(ValueError):
        format_openspiel(BoardRecord("f", "openspiel", 0, 1, owner=np.full(52, -1, dtype=np.int8)))
