"""The bridge rules `validate` applies to every record, whatever its format."""

from __future__ import annotations

import numpy as np
import pytest

from bridgeflow.dataset.encodings import parse_call, parse_pbn_hand
from bridgeflow.dataset.lin import parse_lin
from bridgeflow.dataset.openspiel import parse_openspiel
from bridgeflow.dataset.record import BoardRecord, Reason, RecordError, Rejected, Repair
from bridgeflow.dataset.schema import records_row
from bridgeflow.dataset.validate import check, owner_from_hands, replay_to_end

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


# ---------------------------------------------------------------- repairs

def calls(text: str) -> list[int]:
    return [parse_call(call) for call in text.split()]


def test_passes_after_a_complete_auction_are_dropped_and_listed():
    checked = check(record(auction=calls("3NT P P P P"), alerts=[True, False, False, False, True],
                           explanations=["strong", None, None, None, "extra"]))
    assert checked.auction == calls("3NT P P P") and checked.auction_complete
    assert (checked.alerts, checked.explanations) == ([True, False, False, False], ["strong", None, None, None])
    assert checked.repairs == [Repair.TRAILING_PASSES_DROPPED]
    assert (checked.contract_level, checked.contract_strain, checked.declarer) == (3, 4, 0)
    passed_out = check(record(auction=calls("P P P P P")))
    assert (passed_out.auction, passed_out.contract_level, passed_out.repairs) == (
        calls("P P P P"), 0, [Repair.TRAILING_PASSES_DROPPED])


def test_extra_passes_before_a_full_play_are_dropped():
    # "7NT P P P P P": two passes too many, then E leads and wins all 13 tricks.
    checked = check(record(auction=calls("7NT P P P P P"), play=_play_all_tricks()))
    assert checked.auction == calls("7NT P P P") and checked.tricks == 0
    assert checked.repairs == [Repair.TRAILING_PASSES_DROPPED]


@pytest.mark.parametrize("auction, field", [
    ("3NT P P P 4S", "auction[4]"),  # a bid after the end
    ("3NT P P P P X", "auction[4]"),  # passes, then a double: not only passes after the end
    ("1S 1H P P P P", "auction[1]"),  # an illegal call before the end stays illegal
])
def test_other_calls_after_the_end_stay_illegal(auction, field):
    rejected = check(record(auction=calls(auction)))
    assert isinstance(rejected, Rejected) and (rejected.reason, rejected.field) == (Reason.ILLEGAL_CALL, field)


def test_a_complete_auction_is_not_repaired():
    assert check(record(auction=calls("1S P 4S P P P"))).repairs == []
    assert check(record(auction=calls("1S P"))).repairs == []


def test_trailing_passes_are_repaired_for_lin_and_openspiel_too():
    # LIN: md S,W,N,E hands (dealer 3 = N), "1N 5D p p p p p" as a vugraph operator typed it.
    lin = ("qx|o1|md|3SJT9876H54D654CAK,S54H76DT987CQJT98,S2HAKQJT98DA32C32,SAKQ3H32DKQJC7654|"
           "sv|o|mb|1N|mb|5D|mb|p|mb|p|mb|p|mb|p|mb|p|pg||\n")
    [lin_record] = parse_lin(lin.encode(), "x.lin")
    checked = check(lin_record)
    assert isinstance(checked, BoardRecord), checked
    assert checked.auction == calls("1NT 5D P P P") and checked.repairs == [Repair.TRAILING_PASSES_DROPPED]
    # OpenSpiel: a deal, then 7NT (id 52 + 37) and four passes (id 52).
    spiel = " ".join(map(str, list(range(52)) + [89, 52, 52, 52, 52])) + "\n"
    [spiel_record] = parse_openspiel(spiel.encode(), "x.txt")
    checked = check(spiel_record)
    assert checked.auction == calls("7NT P P P") and checked.repairs == [Repair.TRAILING_PASSES_DROPPED]


def test_replay_to_end_gives_the_real_length():
    state, length = replay_to_end(0, calls("1S P 4S P P P P P"))
    assert length == 6 and state.finished and state.calls == calls("1S P 4S P P P")


# 6H by N, not vulnerable (board vulnerability 0), with 0 tricks: 12 down, NS -600.
SIX_HEARTS = dict(contract_level=6, contract_strain=2, contract_doubled=0, declarer=0, tricks=0)


@pytest.mark.parametrize("score", [None, "NS 620", "", "EW -600", "nonsense"])
def test_a_zero_trick_result_without_play_or_a_score_that_agrees_is_a_placeholder(score):
    checked = check(record(**SIX_HEARTS, source_score=score))
    assert checked.tricks is None and checked.repairs == [Repair.PLACEHOLDER_RESULT_DROPPED]
    assert records_row(checked, 1)["score_ns"] is None


@pytest.mark.parametrize("score", ["NS -600", "EW 600", "-600", "ns -600 ew 600"])
def test_a_zero_trick_result_that_the_score_confirms_is_kept(score):
    checked = check(record(**SIX_HEARTS, source_score=score))
    assert (checked.tricks, checked.repairs) == (0, [])


def test_zero_tricks_stay_when_the_board_was_played_or_passed_out():
    assert check(record(contract_level=0, tricks=0)).tricks == 0
    assert check(record(**{**SIX_HEARTS, "tricks": 3})).tricks == 3
    played = check(record(contract_level=7, contract_strain=4, contract_doubled=0, declarer=0, tricks=0,
                          play=_play_all_tricks()))
    assert (played.tricks, played.repairs) == (0, [])


def test_a_real_vugraph_board_with_a_pass_too_many(real_data):
    # 427/42720.lin, closed room board 11: "mb|1N|mb|p|mb|p|mb|p|mb|p|" and all 52 cards played.
    path = real_data / "bbo_vugraph_alphabridge/raw_lin_data/427/42720.lin"
    board = list(parse_lin(path.read_bytes(), path.name))[21]
    checked = check(board)
    assert isinstance(checked, BoardRecord), checked
    assert (checked.room, checked.board, checked.auction) == ("closed", 11, calls("1NT P P P"))
    assert (checked.contract_level, checked.contract_strain, checked.declarer, checked.tricks) == (1, 4, 2, 6)
    assert checked.repairs == [Repair.TRAILING_PASSES_DROPPED]


@pytest.mark.parametrize("given", [{}, {"board": 4, "dealer": 0, "event": "x", "players": ["a", "b", "c", "d"]}])
def test_a_record_with_nothing_of_a_board_is_not_a_deal(given):
    empty = check(BoardRecord("f", "pbn", 0, 1, **given))
    assert (empty.reason, empty.field) == (Reason.NOT_A_DEAL, "deal")
    for board_part in ({"tricks": 9}, {"contract_level": 0}, {"claim": 7}, {"dd_tricks": [None] * 19 + [7]}):
        assert isinstance(check(BoardRecord("f", "pbn", 0, 1, **given, **board_part)), BoardRecord), board_part
