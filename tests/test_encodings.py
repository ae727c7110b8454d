"""The encodings of docs/conventions.md: cards, calls, seats, vulnerability, deal identity, splits."""

from __future__ import annotations

import numpy as np
import pytest

from bridgeflow.dataset import encodings as enc
from bridgeflow.dataset.splits import SPLITS, in_split, split_of


def test_card_encoding_reads_as_a_4x13_grid():
    assert enc.parse_card("C2") == 0
    assert enc.parse_card("CA") == 12
    assert enc.parse_card("D2") == 13
    assert enc.parse_card("SA") == 51
    assert enc.parse_card("h10") == enc.parse_card("HT") == 2 * 13 + 8
    assert [enc.card_name(c) for c in (0, 12, 13, 51)] == ["C2", "CA", "D2", "SA"]
    with pytest.raises(ValueError):
        enc.parse_card("SZ")


def test_call_encoding_matches_design():
    assert [enc.parse_call(c) for c in ("Pass", "X", "XX", "1C", "1NT", "7NT", "3n", "d", "r")] == [
        0, 1, 2, 3, 7, 37, 17, 1, 2]
    assert enc.NUM_CALLS == 38
    assert [enc.call_name(c) for c in (0, 1, 2, 3, 7, 37)] == ["P", "X", "XX", "1C", "1NT", "7NT"]
    for call in range(3, 38):
        assert enc.bid_index(enc.bid_level(call), enc.bid_strain(call)) == call


def test_pbn_hands_round_trip_and_voids():
    cards = enc.parse_pbn_hand("K843.Q92.A75.J64")
    assert len(cards) == 13
    assert enc.hand_to_pbn(cards) == "K843.Q92.A75.J64"
    void = enc.parse_pbn_hand("AKQJT98765432...")
    assert enc.hand_to_pbn(void) == "AKQJT98765432..."
    with pytest.raises(ValueError):
        enc.parse_pbn_hand("AK.QJ.T9")


def test_deal_id_is_blake2b_of_owner_bytes_and_ignores_hand_card_order():
    import hashlib

    owner = np.repeat(np.arange(4, dtype=np.int8), 13)
    expected = int.from_bytes(hashlib.blake2b(owner.tobytes(), digest_size=8).digest(), "little")
    assert enc.deal_id(owner) == expected
    hands = enc.hands_from_owner(owner)
    shuffled = [list(reversed(h)) for h in hands]
    assert enc.deal_id(enc.owner_from_hands(shuffled)) == expected
    rotated = (owner + 1) % 4
    assert enc.deal_id(rotated) != expected


def test_deal_to_pbn_marks_unknown_hands():
    owner = np.repeat(np.arange(4, dtype=np.int8), 13)
    owner[owner == 3] = -1
    text = enc.deal_to_pbn(owner)
    assert text.startswith("N:") and text.endswith(" -")
    assert text.split()[0] == "N:...AKQJT98765432"  # N holds all clubs: spades, hearts, diamonds void
    assert text.split()[1] == "..AKQJT98765432."  # E all diamonds


def test_duplicate_rotation():
    assert [enc.duplicate_dealer(b) for b in (1, 2, 3, 4, 5)] == [0, 1, 2, 3, 0]
    # boards 1-4: None, NS, EW, Both; 5: NS; 16: EW; 17 repeats board 1
    assert [enc.duplicate_vulnerability(b) for b in (1, 2, 3, 4, 5, 16, 17)] == [0, 1, 2, 3, 1, 2, 0]
    assert enc.is_vulnerable(enc.VUL_NS, enc.S) and not enc.is_vulnerable(enc.VUL_NS, enc.E)


def test_hcp_and_lengths():
    owner = np.repeat(np.arange(4, dtype=np.int8), 13)  # N all clubs, E diamonds, S hearts, W spades
    assert enc.hcp_by_seat(owner).tolist() == [10, 10, 10, 10]
    assert enc.suit_lengths(owner)[0].tolist() == [13, 0, 0, 0]


def test_splits_are_by_deal_id_bucket():
    assert split_of(1279) == "train"
    assert split_of(85) == "valid"
    assert split_of(199) == "test"


def test_the_conventions_doc_states_the_numbering_the_code_uses():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "conventions.md").read_text()
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in doc.splitlines()
            if line.startswith("| ") and line.count("|") == 3}
    assert rows["seats"] == ", ".join(f"{seat}={index}" for index, seat in enumerate(enc.SEATS))
    assert rows["strains"] == ", ".join(f"{strain}={index}" for index, strain in enumerate(enc.STRAINS))
    assert rows["vulnerability"] == "none=0, NS=1, EW=2, both=3"
    assert [enc.parse_vulnerability(name) for name in ("none", "NS", "EW", "both")] == [0, 1, 2, 3]
    assert f"1C = {enc.parse_call('1C')}, 7NT = {enc.parse_call('7NT')}" in rows["calls (38)"]
    assert enc.card_index(enc.SUITS.index("S"), enc.RANKS.index("A")) == 51 and "rank 0 = `2`" in rows["cards"]
    assert split_of(79) == "train" and split_of(80) == split_of(89) == "valid" and split_of(90) == "test"
    assert "below 80 train, below 90 valid, else test" in doc


def test_one_split_rule_for_single_ids_and_arrays():
    ids = np.array([0, 79, 80, 89, 90, 99, 100, 2**64 - 17], np.uint64)
    assert [split_of(int(i)) for i in ids] == ["train", "train", "valid", "valid", "test", "test", "train", "test"]
    masks = np.stack([in_split(ids, name) for name in SPLITS])
    assert (masks.sum(axis=0) == 1).all()  # every id in exactly one split
    assert [SPLITS[k] for k in masks.argmax(axis=0)] == [split_of(int(i)) for i in ids]
    with pytest.raises(ValueError):
        in_split(ids, "all")
