"""The bridge rules `validate` applies to every record, whatever its format."""

from __future__ import annotations

import numpy as np
import pytest

from bridgeflow.dataset.encodings import parse_call, parse_pbn_hand
from bridgeflow.dataset.record import BoardRecord, Reason, RecordError, Rejected
from bridgeflow.dataset.validate import check, owner_from_hands

# N: all spades, E: all hearts, S: all diamonds, W: all clubs.
HANDS = [parse_pbn_hand(h) for h in ("AKQJT98765432...", ".AKQJT98765432..", "..AKQJT98765432.", "...AKQJT98765432")]


def record(**fields) -> BoardRecord:
    base = dict(source_file="f.pbn", source_format="pbn", source_position=0, source_line=1,
                owner=owner_from_hands(HANDS), dealer=0, vulnerability=0)
    base.update(fields)
    return BoardRecord(**base)


def test_owner_rejects_duplicates_and_short_hands_and_implies_a_fourth():
    with pytest.raises(RecordError) as error:
        owner_from_hands([HANDS[0], HANDS[0], HANDS[2], HANDS[3]])
    assert error.value.reason is Reason.DUPLICATE_CARD and "in N and E" in error.value.message
    with pytest.raises(RecordError) as error:
        owner_from_hands([HANDS[0][:12], HANDS[1], HANDS[2], HANDS[3]])
    assert error.value.reason is Reason.WRONG_HAND_SIZE
    implied = owner_from_hands([HANDS[0], HANDS[1], None, HANDS[3]])
    assert (implied == owner_from_hands(HANDS)).all()
    partial = owner_from_hands([HANDS[0], None, None, HANDS[3]])
    assert (partial == -1).sum() == 26


def test_contract_filled_from_auction():
    checked = check(record(auction=[parse_call(c) for c in "1S P 4S P P P".split()]))
    assert (checked.contract_level, checked.contract_strain, checked.contract_doubled, checked.declarer) == (4, 3, 0, 0)


def test_contract_that_does_not_match_the_auction_is_quarantined():
    rejected = check(record(auction=[parse_call(c) for c in "1S P 4S P P P".split()],
                            contract_level=4, contract_strain=2, contract_doubled=0, declarer=0))
    assert isinstance(rejected, Rejected) and rejected.reason is Reason.CONTRACT_MISMATCH
    assert "4S by N" in rejected.message


def test_illegal_call_is_named_by_index():
    rejected = check(record(auction=[parse_call(c) for c in "1S 1H P P P".split()]))
    assert rejected.reason is Reason.ILLEGAL_CALL and rejected.field == "auction[1]"


def _play_all_tricks():
    """7NT by N: E leads; every trick the leader's suit is only in one hand, so the leader wins."""
    # E leads hearts 13 times? E holds all hearts and wins each trick (no one can follow).
    play = []
    for k in range(13):
        play += [HANDS[1][k], HANDS[2][k], HANDS[3][k], HANDS[0][k]]  # E, S, W, N
    return play


def test_full_play_gives_tricks_and_a_wrong_stated_result_is_caught():
    play = _play_all_tricks()
    checked = check(record(contract_level=7, contract_strain=4, contract_doubled=0, declarer=0, play=play))
    assert checked.tricks == 0  # E wins every trick with hearts
    wrong = check(record(contract_level=7, contract_strain=4, contract_doubled=0, declarer=0, play=play, tricks=13))
    assert wrong.reason is Reason.BAD_RESULT


def test_card_played_out_of_turn_or_twice():
    play = _play_all_tricks()
    swapped = [play[1], play[0]] + play[2:]
    rejected = check(record(contract_level=7, contract_strain=4, contract_doubled=0, declarer=0, play=swapped))
    assert rejected.reason is Reason.BAD_PLAY and rejected.field == "play[0]"
    twice = play[:5] + [play[0]]
    assert check(record(contract_level=7, contract_strain=4, contract_doubled=0, declarer=0, play=twice)).reason is Reason.BAD_PLAY


def test_claim_sets_tricks_when_play_stops():
    play = _play_all_tricks()[:8]
    checked = check(record(contract_level=7, contract_strain=4, contract_doubled=0, declarer=0, play=play, claim=11))
    assert checked.tricks == 11


def test_dd_cells_outside_0_13_are_rejected_and_partial_tables_kept():
    partial = [None] * 20
    partial[3] = 9
    assert check(record(dd_tricks=partial)).dd_tricks[3] == 9
    bad = [7] * 20
    bad[5] = 14
    assert check(record(dd_tricks=bad)).reason is Reason.UNKNOWN_VALUE


def test_unknown_hand_is_fine():
    owner = np.full(52, -1, dtype=np.int8)
    assert isinstance(check(record(owner=owner)), BoardRecord)
