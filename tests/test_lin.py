"""The LIN reader and writer: hand-made fixtures checked value by value, the real BBO files
(vugraph archive, pbntools hand records, bridge-bots samples), and format_lin round trips.

Expected values come from reading the LIN text by hand (md lists hands S, W, N, E; dealer digit
1=S 2=W 3=N 4=E) and are written with encodings.parse_pbn_hand, not with the code under test."""

from __future__ import annotations

import codecs
import random
import re
import struct
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridgeflow.dataset.auction import AuctionState, replay
from bridgeflow.dataset.encodings import (
    E, N, S, W, deal_id, owner_from_hands, parse_call, parse_card, parse_pbn_hand, seat_index,
)
from bridgeflow.dataset.lin import format_lin, parse_lin
from bridgeflow.dataset.record import BoardRecord, Reason, Rejected, Repair
from bridgeflow.dataset.validate import check

from reader_checks import read_checked

FIXTURES = Path(__file__).resolve().parent / "lin"
CONTENT_FIELDS = ("dealer", "vulnerability", "board", "event", "scoring", "players", "auction", "alerts",
                  "explanations", "play", "claim")

# The deal of tests/lin/mini_vugraph.lin and bad_boards.lin (PBN order S.H.D.C).
MINI_DEAL = {N: "2.AKQJT98.A32.32", E: "AKQ3.32.KQJ.7654", S: "JT9876.54.654.AK", W: "54.76.T987.QJT98"}


def owner_of(hands: dict[int, str]) -> np.ndarray:
    return owner_from_hands([parse_pbn_hand(hands[seat]) for seat in (N, E, S, W)])


def calls(text: str) -> list[int]:
    return [parse_call(token) for token in text.split()]


def cards(text: str) -> list[int]:
    return [parse_card(token) for token in text.split()]


def parse_file(path: Path) -> list:
    return list(parse_lin(path.read_bytes(), path.name))


def same_content(first: BoardRecord, second: BoardRecord) -> bool:
    owners_equal = (first.owner is None and second.owner is None) or (
        first.owner is not None and second.owner is not None and np.array_equal(first.owner, second.owner))
    return owners_equal and all(getattr(first, name) == getattr(second, name) for name in CONTENT_FIELDS)


# ------------------------------------------------------------------------------ fixtures

def test_mini_vugraph_reads_every_field():
    open_room, closed_room = parse_file(FIXTURES / "mini_vugraph.lin")
    assert (open_room.room, open_room.board, closed_room.room, closed_room.board) == ("open", 1, "closed", 1)
    for record in (open_room, closed_room):
        assert record.source_format == "lin"
        assert np.array_equal(record.owner, owner_of(MINI_DEAL))
        assert (record.dealer, record.vulnerability) == (N, 0)
        assert (record.event, record.scoring) == ("Test Cup", "IMP")
    # pn: open S,W,N,E then closed S,W,N,E -> players N,E,S,W
    assert open_room.players == ["Nia", "Eli", "Sam", "Wes"]
    assert closed_room.players == ["Ned", "Eva", "Sue", "Wil"]
    # The commentary "see the 2|3 rule" holds a '|' and must not shift the pairs after it.
    assert open_room.auction == calls("1H 1S P P 4H P P P")
    assert open_room.alerts == [True] + [False] * 7
    assert open_room.explanations == ["5+ hearts"] + [None] * 7
    assert open_room.play == cards("SA S6 S4 S2 SK S7 S5 H8")
    assert open_room.claim == 10
    assert open_room.tags["zz"] == "custom" and open_room.tags["rs"] == "4HN="
    assert "kib" not in repr(open_room.tags)  # commentary is dropped
    assert closed_room.explanations[2] == "limit\n4 trumps" and closed_room.alerts[2]
    assert closed_room.tags["rs"] == "4HN+1" and closed_room.claim == 11
    # Positions and lines (CRLF file, boards at lines 4 and 8), raw text from qx to the next qx.
    assert [r.source_position for r in (open_room, closed_room)] == [0, 1]
    assert [r.source_line for r in (open_room, closed_room)] == [4, 8]
    assert open_room.raw_text.startswith("qx|o1|") and open_room.raw_text.rstrip().endswith("mc|10|pg||")
    checked = check(open_room)
    assert (checked.contract_level, checked.contract_strain, checked.declarer, checked.tricks) == (4, 2, N, 10)


def test_hand_records_one_board_per_line_with_three_hands():
    first, second = parse_file(FIXTURES / "hand_records.lin")
    deal = owner_of({S: "JT9876.5432..432", W: "AKQ5432.T9876.3.", N: ".AKQJ.T987654.65",
                     E: "..AKQJ2.AKQJT987"})
    for record in (first, second):
        assert np.array_equal(record.owner, deal)  # East is implied; '10' and lower case read
        assert record.players == ["Nia", "Eli", "Sam", "Wes"]
        assert record.room is None and record.tags == {}
    assert (first.board, first.dealer, first.vulnerability) == (5, S, 3)
    assert first.auction == calls("P 1S P 4S P P P")
    assert first.explanations[3] == "to play" and first.alerts[3]
    assert first.play == cards("C5 CA C2 S2") and first.claim == 10
    assert (second.board, second.dealer, second.vulnerability, second.play) == (6, E, 0, None)
    assert check(second).contract_level == 0
    assert [(r.source_position, r.source_line) for r in (first, second)] == [(0, 1), (1, 2)]


def test_each_bad_board_is_rejected_with_its_field_and_parsing_goes_on():
    items = parse_file(FIXTURES / "bad_boards.lin")
    expected = [
        (Reason.BAD_CARD, "md"),  # 'Z' is not a rank
        (Reason.UNKNOWN_VALUE, "mb[4]"),  # '1X'
        (Reason.UNKNOWN_VALUE, "sv"),  # 'q'
        (Reason.BAD_CARD, "pc[0]"),  # 'SZ'
        (Reason.SYNTAX, "mb[1]"),  # 'mb|p||pc': an empty token where a key should be
        (Reason.WRONG_HAND_SIZE, "md"),  # South has 12 cards
        (Reason.DUPLICATE_CARD, "md"),  # CK in South and North
        (Reason.UNKNOWN_VALUE, "qx"),  # 'x8' is no room
        (Reason.UNKNOWN_VALUE, "mc"),  # 'ten'
        (Reason.UNKNOWN_VALUE, "md"),  # dealer digit 5
    ]
    assert [(item.reason, item.field) for item in items[:-1]] == expected
    assert all(isinstance(item, Rejected) and item.message for item in items[:-1])
    assert isinstance(items[-1], BoardRecord) and items[-1].play == cards("SA")
    assert [item.source_position for item in items] == list(range(11))
    assert [item.source_line for item in items] == list(range(1, 12))
    assert items[1].raw_text.startswith("qx|o2|") and "1X" in items[1].raw_text


MD = "md|3SJT9876H54D654CAK,S54H76DT987CQJT98,S2HAKQJT98DA32C32,|"


def test_board_data_before_the_first_qx_is_rejected_not_attached():
    items = list(parse_lin(f"vg|x,y,I,1,1,a,0,b,0|{MD}sv|b|\nqx|o1|{MD}".encode(), "f.lin"))
    assert isinstance(items[0], Rejected) and (items[0].reason, items[0].field) == (Reason.SYNTAX, "md")
    assert isinstance(items[1], BoardRecord) and items[1].vulnerability is None
    assert [item.source_position for item in items] == [0, 1]


@pytest.mark.parametrize("data", [b"", b"\r\n", b"vg|Ev,S1,I,1,16,A,0,B,0|\r\nrs|,,|\r\npn|a,b,c,d,e,f,g,h|pg||\r\n"])
def test_header_only_or_empty_files_have_no_boards(data):
    assert list(parse_lin(data, "f.lin")) == []


def test_md_without_cards_is_no_deal():
    empty, placeholder, no_dealer = parse_lin(b"qx|o1|md||sv|o|\nqx|o2|md|3SHDC,SHDC,SHDC,SHDC|\nqx|o3|md|0|", "f")
    assert (empty.owner, empty.dealer) == (None, None)
    assert (placeholder.owner, placeholder.dealer) == (None, N)
    assert (no_dealer.owner, no_dealer.dealer) == (None, None)


def test_bytes_utf8_cp1252_and_binary():
    boards = [
        "qx|o1|" + MD + "mb|1H!|an|caf\u00e9|".encode("utf-8").decode("latin-1"),
        "qx|o2|" + MD + "mb|1H!|an|caf\u00e9|",  # cp1252 byte 0xE9
        "qx|o3|" + MD + "mb|1H!|an|\x81\x81|",  # 0x81: neither UTF-8 nor cp1252
        "qx|o4|" + MD + "mb|1H|an|a\x00b|",  # NUL: binary
        "qx|o5|" + MD + "mb|1H|an|^H typo\x08|",  # a stray control character is kept
    ]
    data = b"\xef\xbb\xbfpn|Jos\xe9,b,c,d,e,f,g,h|\n" + "\n".join(boards).encode("latin-1")
    first, second, third, fourth, fifth = parse_lin(data, "f.lin")
    assert first.explanations == ["caf\u00e9"] and second.explanations == ["caf\u00e9"]
    assert first.players[2] == "Jos\u00e9"  # header in cp1252, board in UTF-8
    assert (third.reason, third.field, third.source_line) == (Reason.UNDECODABLE_BYTES, "an", 4)
    assert third.raw_text.endswith("an|\\x81\\x81|\n")  # plain Unicode, the bytes written out
    assert (fourth.reason, fourth.field) == (Reason.UNDECODABLE_BYTES, "an")
    assert isinstance(fifth, BoardRecord) and fifth.explanations == ["^H typo\x08"]


def test_digits_that_int_cannot_read_are_unknown_values():
    bad, good = parse_lin("vg|Ev,S1,I,\u00b2,16|\nqx|o1|md||mc|\u00b2|\nqx|o2|md||mc|9|".encode(), "f.lin")
    assert (bad.reason, bad.field) == (Reason.UNKNOWN_VALUE, "mc")
    assert (good.event, good.claim) == ("Ev", 9)


def test_unknown_keys_and_layout_go_to_tags():
    (record,) = parse_lin(b"qx|o1|st|small|" + MD.encode() + b"xx|1|xx|2|pg||rh||", "f")
    assert record.tags == {"st": "small", "xx": "1|2"}


def test_a_key_without_a_closing_bar_at_the_end_is_read_and_stray_text_rejected():
    (complete,) = parse_lin(("qx|o1|" + MD + "mc|9").encode(), "f")
    assert complete.claim == 9
    (truncated,) = parse_lin(("qx|o1|" + MD + "mc|9|pc").encode(), "f")
    assert (truncated.reason, truncated.field) == (Reason.SYNTAX, "mc")


# ------------------------------------------------------------------------------ real files

def test_bridge_bots_usbf_alerts_explanations_and_claims(real_data):
    items = parse_file(real_data / "forrestrice_bridgebots_samples" / "usbf_sf_14502.lin")
    assert len(items) == 30 and all(isinstance(item, BoardRecord) for item in items)
    first = items[0]  # qx|o46 ... mb|1H|mb|p|nt|...|mb|3C!|an|jacoby 2N|...
    assert (first.room, first.board, first.dealer, first.vulnerability) == ("open", 46, E, 0)
    assert first.players == ["Rodwell", "Weinstein", "Meckstroth", "Levin"]
    assert first.auction == calls("1H P 3C P 4H P P P")
    assert first.alerts == [False, False, True, False, False, False, False, False]
    assert first.explanations[2] == "jacoby 2N" and first.claim == 10
    assert first.play[:4] == cards("C2 C3 CA CJ")
    assert first.event == "2010 USBF SF A" and first.tags["rs"] == "4HE="
    assert items[1].explanations[8] == "no slam interest" and items[1].alerts[8]
    assert all(not isinstance(check(item), Rejected) for item in items)


def test_pbntools_hand_record_by_hand(real_data):
    path = real_data / "jarekczek_pbntools_tests/test/test_bbo_history_with_lins/3381671193.lin"
    (record,) = parse_file(path)
    # The PBN export of the same board: Deal "N:AQ983.A973.K92.3 J7..AQJ863.KJ864 KT2.QT842.7.T952
    # 654.KJ65.T54.AQ7", Declarer E, Contract 5D, Result 11. The LIN gives 3 hands, ranks ascending.
    expected = owner_of({N: "AQ983.A973.K92.3", E: "J7..AQJ863.KJ864", S: "KT2.QT842.7.T952", W: "654.KJ65.T54.AQ7"})
    assert np.array_equal(record.owner, expected)
    assert (record.board, record.dealer, record.vulnerability) == (1, N, 0)
    assert record.players == ["jaak99", "myriam1745", "jdr9999", "sisse1745"]
    assert record.explanations[1] == "gesthem" and record.alerts[1]
    checked = check(record)
    assert (checked.contract_level, checked.contract_strain, checked.declarer, checked.tricks) == (5, 1, E, 11)


def test_vugraph_board_by_hand(real_data):
    items = parse_file(real_data / "bbo_vugraph_alphabridge/raw_lin_data/423/42300.lin")
    first = items[0]  # qx|o16|, md|2SQTHAQJTDJT82CT93,SAK95432H54DAKQC5,SJ876HK8D96CAKQ42,SH97632D7543CJ876|sv|e
    expected = owner_of({S: "QT.AQJT.JT82.T93", W: "AK95432.54.AKQ.5", N: "J876.K8.96.AKQ42", E: ".97632.7543.J876"})
    assert np.array_equal(first.owner, expected)
    assert (first.room, first.board, first.dealer, first.vulnerability) == ("open", 16, W, 2)
    assert first.auction == calls("1S 2C P 3C 4S X P P P") and not any(first.alerts)
    assert (first.event, first.scoring) == ("B 2015 Reisinger F1", "BAM")
    assert first.players == ["Fredin", "Vainikonis", "De Knijff", "Olanski"]
    assert items[1].players == ["Gierulski", "Bruum", "Skrzypczak", "Blakset"]
    assert first.play[:8] == cards("CA C6 CT C5 CK C7 C9 S2") and first.claim == 8
    assert first.tags["rs"] == "4SWx-2"
    checked = check(first)
    assert (checked.contract_level, checked.contract_strain, checked.contract_doubled, checked.declarer,
            checked.tricks) == (4, 3, 1, W, 8)
    closed_18 = items[5]  # qx|c18 ... mb|p|mb|1C!|mb|p|mb|2S!|...
    assert closed_18.board == 18 and closed_18.alerts == [False, True, False, True, False, False, False, False, False]


def test_pn_names_holding_commas(real_data):
    # pn has 12 comma-separated parts: 'Græsli, Bå' style names in the closed room.
    items = parse_file(real_data / "bbo_vugraph_alphabridge/raw_lin_data/445/44503.lin")
    open_room = next(r for r in items if r.room == "open")
    closed_room = next(r for r in items if r.room == "closed")
    assert open_room.players == ["Brandsnes", "L. Eide", "H\u00f8yland", "H. Eide"]
    assert closed_room.players == ["Eide, Pett", "Livgard, A", "Gr\u00e6sli, B\u00e5", "Aa, Terje"]
    with pytest.raises(ValueError):  # pn cannot carry them back
        format_lin(closed_room)


def _lin_files(root: Path) -> list[Path]:
    return sorted(root.glob("**/*.lin"))


def test_every_small_lin_file_parses_and_round_trips(real_data):
    paths = _lin_files(real_data / "jarekczek_pbntools_tests")
    paths += _lin_files(real_data / "forrestrice_bridgebots_samples")
    assert len(paths) == 785 + 2
    counts = Counter()
    for path in paths:
        items = parse_file(path)
        counts["boards"] += len(items)
        for item in items:
            assert isinstance(item, BoardRecord), str(item)
            (again,) = parse_lin(format_lin(item).encode(), "again.lin")
            assert same_content(item, again), path
            if path.name != "usbf_sf_14502.lin":  # the vugraph sample has room, vg and rs tags
                assert again.tags == item.tags and again.room == item.room
            checked = check(item)
            counts[type(checked).__name__] += 1
            if checked.auction is not None:
                counts["complete auction"] += replay(checked.dealer, checked.auction).finished
    # SOURCES.md: 785 pbntools boards, 776 with a complete auction; bridge-bots 31 boards, all bid.
    assert counts == {"boards": 816, "BoardRecord": 816, "complete auction": 776 + 31}


def test_pbntools_lin_and_pbn_carry_the_same_deals(real_data):
    """The PBN files name their LIN source in [DealId "n.lin"]; both must give the same deal_id.
    The PBN side is read here with a regex on [Deal], independent of any PBN parser."""
    root = real_data / "jarekczek_pbntools_tests"
    lin_by_name = {path.name: path for path in _lin_files(root)}
    matched = 0
    for pbn in sorted(root.glob("**/*.pbn")):
        text = pbn.read_bytes().decode("utf-8", "replace")
        for game in re.split(r"\n\s*\n", text):
            name = re.search(r'\[DealId "([^"]+)"\]', game)
            if name is None or name.group(1) not in lin_by_name:
                continue
            first, hands_text = re.search(r'\[Deal "([NESW]):([^"]+)"\]', game).groups()
            hands = [None] * 4
            for offset, hand in enumerate(hands_text.split()):
                hands[(seat_index(first) + offset) % 4] = parse_pbn_hand(hand)
            (record,) = parse_file(lin_by_name[name.group(1)])
            assert deal_id(record.owner) == deal_id(owner_from_hands(hands)), name.group(1)
            matched += 1
    assert matched == 782  # the other 3 LIN files are named by no PBN game


def test_pbntools_lin_and_pbn_parsers_agree(real_data):
    pbn = pytest.importorskip("bridgeflow.dataset.pbn")
    root = real_data / "jarekczek_pbntools_tests"
    lin_ids = {path.name: deal_id(parse_file(path)[0].owner) for path in _lin_files(root)}
    compared = 0
    for path in sorted(root.glob("**/*.pbn")):
        for record in pbn.parse_pbn(path.read_bytes(), path.name):
            name = getattr(record, "tags", {}).get("DealId")
            if isinstance(record, BoardRecord) and name in lin_ids and record.owner is not None:
                assert deal_id(record.owner) == lin_ids[name], name
                compared += 1
    assert compared >= 782


# ------------------------------------------------------------------------------ whole vugraph set

QX_KEY = re.compile(rb"(?:^|\|)\s*qx\|")


@pytest.fixture(scope="module")
def vugraph(real_data) -> list[tuple[Path, bytes, list]]:
    """Every vugraph file with its bytes and items (about 15 s on one core with the checks)."""
    files = []
    for path in sorted((real_data / "bbo_vugraph_alphabridge").glob("**/*.lin")):
        data = path.read_bytes()
        files.append((path, data, list(parse_lin(data, path.name))))
    return files


def test_vugraph_one_item_per_qx(vugraph):
    assert len(vugraph) == 3000
    empty = 0
    for path, data, items in vugraph:
        assert len(items) == len(QX_KEY.findall(data)), path
        assert [item.source_position for item in items] == list(range(len(items)))
        lines = data.split(b"\n")
        for item in items:
            assert item.raw_text.startswith("qx|")
            assert item.raw_text[:40] in lines[item.source_line - 1].decode()  # some lines hold two boards
        empty += not items
    assert empty == 441  # SOURCES.md: 441 header-only files
    assert sum(len(items) for _, _, items in vugraph) == 56_018


def test_vugraph_parse_rejections_are_the_hand_checked_ones(vugraph):
    rejected = {(path.name, item.source_position, item.reason, item.field)
                for path, _, items in vugraph for item in items if isinstance(item, Rejected)}
    # 433/43357.lin, qx|c17: "mb|3C|mb|p|mb|12H!|mb|3H|" - an operator typo, no such call.
    # The others: "md||" (no deal, so no dealer) before an auction and play.
    no_deal = {(name, position, Reason.UNKNOWN_VALUE, "md") for name, position in (
        ("43554.lin", 0), ("44148.lin", 0), ("44168.lin", 0), ("44177.lin", 0), ("44177.lin", 1),
        ("44219.lin", 0), ("44224.lin", 0))}
    assert rejected == {("43357.lin", 1, Reason.UNKNOWN_VALUE, "mb[5]")} | no_deal


def _play_fits_deal(record: BoardRecord) -> bool:
    """Independent of validate: every trick's cards come from four seats in clockwise order, and
    declarer's left-hand opponent leads the first trick."""
    seats = [int(record.owner[card]) for card in record.play]
    for start in range(0, len(seats), 4):
        trick = seats[start:start + 4]
        if any(seat != (trick[0] + offset) % 4 for offset, seat in enumerate(trick)):
            return False
    contract = replay(record.dealer, record.auction).contract()
    return contract is None or seats[0] == (contract.declarer + 1) % 4


def test_vugraph_quarantine_after_validate(vugraph):
    reasons = Counter()
    for path, _, items in vugraph:
        for item in items:
            if isinstance(item, Rejected):
                reasons[item.reason] += 1
                continue
            result = check(item)
            if isinstance(result, Rejected):
                reasons[result.reason] += 1
                if result.reason == Reason.BAD_PLAY:
                    # Whole sessions where the operator loaded the wrong deal, or entered the
                    # auction rotated: the records contradict themselves (see the report).
                    assert not _play_fits_deal(item), str(result)
    bad_play = reasons.pop(Reason.BAD_PLAY, 0)
    assert sum(reasons.values()) / 56_018 < 0.001, reasons
    assert bad_play / 56_018 < 0.02


def test_vugraph_boards_round_trip(vugraph):
    """Every tenth file. (format_lin refuses names holding ',': see test_pn_names_holding_commas.)"""
    written = 0
    for path, _, items in vugraph[::10]:
        for item in items:
            if isinstance(item, BoardRecord) and not any("," in (name or "") for name in item.players or ()):
                (again,) = parse_lin(format_lin(item).encode(), "again.lin")
                assert same_content(item, again), (path, item.source_position)
                written += 1
    assert written > 5000


# ------------------------------------------------------------------------------ writer

def _records() -> st.SearchStrategy[BoardRecord]:
    """Random boards: any deal (or none), a legal auction prefix, alerts, play, claim."""

    @st.composite
    def build(draw):
        owner = None
        if draw(st.booleans()):
            owner = np.repeat(np.arange(4, dtype=np.int8), 13)[np.array(draw(st.permutations(range(52))))]
        dealer = draw(st.sampled_from([None, 0, 1, 2, 3]))
        auction = alerts = explanations = None
        if dealer is not None and draw(st.booleans()):
            state = AuctionState.start(dealer)
            for _ in range(draw(st.integers(1, 20))):
                legal = np.flatnonzero(state.legal_mask())
                if not len(legal):
                    break
                state.add(int(draw(st.sampled_from(legal.tolist()))))
            auction = state.calls
            alerts = [draw(st.booleans()) for _ in auction]
            text = st.text(st.characters(blacklist_characters="|\r\n\ufeff\u200b\u2060", blacklist_categories=("Cs", "Cc")), max_size=12)
            explanations = [draw(st.none() | text) for _ in auction]
        plain = st.text(st.characters(min_codepoint=32, max_codepoint=0x24F, blacklist_characters=",|"),
                        min_size=1, max_size=8).filter(lambda name: name == name.strip())
        names = st.none() | plain
        return BoardRecord(
            source_file="x", source_format="lin", source_position=0, source_line=1,
            owner=owner, dealer=dealer, event=draw(st.none() | plain),
            vulnerability=draw(st.sampled_from([None, 0, 1, 2, 3])),
            board=draw(st.none() | st.integers(1, 999)),
            players=draw(st.none() | st.lists(names, min_size=4, max_size=4)),
            auction=auction, alerts=alerts, explanations=explanations,
            play=draw(st.none() | st.lists(st.integers(0, 51), min_size=1, max_size=52, unique=True)),
            claim=draw(st.none() | st.integers(0, 13)),
        )

    return build()


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_records())
def test_format_lin_round_trips(record):
    (again,) = parse_lin(format_lin(record).encode(), "again.lin")
    assert same_content(record, again)


def test_several_formatted_boards_in_one_file_stay_apart():
    boards = [next(parse_lin(line.encode(), "f")) for line in (FIXTURES / "hand_records.lin").read_text().splitlines()]
    items = list(parse_lin("\n".join(format_lin(board) for board in boards).encode(), "f"))
    assert len(items) == 2 and all(same_content(a, b) for a, b in zip(boards, items))


def test_format_lin_refuses_what_lin_cannot_carry():
    record = BoardRecord("x", "lin", 0, 1, dealer=N, auction=[0], alerts=[False], explanations=["a|b"])
    with pytest.raises(ValueError):
        format_lin(record)
    with pytest.raises(ValueError):
        format_lin(BoardRecord("x", "lin", 0, 1, players=["a,b", None, None, None]))


# ------------------------------------------------------------------------------ robustness

LIN_PIECES = st.sampled_from([b"|", b"||", b"qx|o1|", b"md|", b"md|3", b"mb|", b"pc|", b"pn|", b"rs|", b"vg|",
                               b"\n", b"\r\n", b"\x00", b"\x81", b"\x9d", b"\xff", b"!", b",",
                               codecs.BOM_UTF16_LE, codecs.BOM_UTF8])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=400) | st.lists(LIN_PIECES | st.binary(max_size=3), max_size=40).map(b"".join))
def test_parse_lin_never_raises_on_any_bytes(data):
    read_checked(parse_lin, data, "fuzz.lin")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_parse_lin_never_raises_on_damaged_real_text(data):
    text = (FIXTURES / "mini_vugraph.lin").read_bytes()
    for _ in range(data.draw(st.integers(1, 5))):
        at = data.draw(st.integers(0, len(text)))
        junk = data.draw(LIN_PIECES | st.just(b""))
        cut = data.draw(st.integers(0, 3))
        text = text[:at] + junk + text[at + cut:]
    read_checked(parse_lin, text, "fuzz.lin")


VUGRAPH_SAMPLE = "bbo_vugraph_alphabridge/raw_lin_data/423/42300.lin"  # 6 boards, CRLF, ASCII


@pytest.fixture
def vugraph_sample(real_data) -> tuple[bytes, list]:
    data = (real_data / VUGRAPH_SAMPLE).read_bytes()
    clean = list(parse_lin(data, "f.lin"))
    assert len(clean) == 6 and all(isinstance(item, BoardRecord) for item in clean)
    return data, clean


def assert_only_board_lost(items: list, clean: list, lost: int) -> Rejected:
    """`items` holds one item per board of `clean`, all with the same content but `lost`,
    which is returned; every raw text and message is plain Unicode."""
    assert len(items) == len(clean)
    for index, (item, before) in enumerate(zip(items, clean)):
        (item.raw_text + str(item)).encode("utf-8")
        if index != lost:
            assert isinstance(item, BoardRecord) and same_content(item, before), index
    assert isinstance(items[lost], Rejected)
    return items[lost]


@pytest.mark.parametrize("byte, escaped", [(b"\x81", "\\x81"), (b"\x9d", "\\x9d"), (b"\x00", "\x00")])
def test_a_bad_byte_inside_a_board_costs_that_board_only(vugraph_sample, byte, escaped):
    data, clean = vugraph_sample
    at = data.index(b"qx|o17|") + 40  # inside md
    items = list(parse_lin(data[:at] + byte + data[at + 1:], "f.lin"))
    bad = assert_only_board_lost(items, clean, 2)
    assert (bad.reason, bad.field, bad.source_line) == (Reason.UNDECODABLE_BYTES, "md", 17)
    assert bad.raw_text.startswith(data[data.index(b"qx|o17|"):at].decode() + escaped + data[at + 1:at + 5].decode())


@pytest.mark.parametrize("mutation", ["replace the newline", "insert", "replace the '|' before the newline"])
@pytest.mark.parametrize("byte", [b"\x00", b"\x81", b"\x9d", b"\xe9"])
def test_garbage_next_to_qx_never_merges_two_boards(vugraph_sample, mutation, byte):
    """The garbage goes with the board before the qx (whose raw text runs up to it); on a line of
    its own (before the qx) it is text that is not LIN, and costs only itself."""
    data, clean = vugraph_sample
    at = data.index(b"\r\nqx|o17|")
    cut = {"replace the newline": (at + 1, at + 2), "insert": (at + 2, at + 2),
           "replace the '|' before the newline": (at - 1, at)}[mutation]
    items = list(parse_lin(data[:cut[0]] + byte + data[cut[1]:], "f.lin"))
    if byte == b"\xe9" and mutation == "replace the '|' before the newline":  # cp1252 'é': pg|é
        assert len(items) == len(clean) and all(map(same_content, items, clean))
        return
    if mutation == "insert":
        junk = items.pop(2)
        assert all(map(same_content, items, clean)) and len(items) == len(clean)
        expected = Reason.UNKNOWN_FORMAT if byte == b"\xe9" else Reason.UNDECODABLE_BYTES  # 'é' is text
        assert (junk.reason, junk.source_line, junk.source_position) == (expected, 17, 2)
        return
    bad = assert_only_board_lost(items, clean, 1)
    expected = Reason.SYNTAX if byte == b"\xe9" else Reason.UNDECODABLE_BYTES  # 'é' is text
    assert (bad.reason, bad.source_line) == (expected, 9)


@pytest.mark.parametrize("byte", [b"\x00", b"\x81", b"^"])
def test_garbage_between_qx_and_its_bar_costs_that_board_only(vugraph_sample, byte):
    data, clean = vugraph_sample
    at = data.index(b"qx|o17|") + 2
    items = list(parse_lin(data[:at] + byte + data[at:], "f.lin"))
    assert assert_only_board_lost(items, clean, 2).source_line == 17


@pytest.mark.parametrize("char", ["*", "J", "7"])
def test_a_stray_character_before_qx_costs_the_board_before_only(vugraph_sample, char):
    data, clean = vugraph_sample
    at = data.index(b"qx|o17|")
    items = list(parse_lin(data[:at - 1] + char.encode() + data[at:], "f.lin"))
    bad = assert_only_board_lost(items, clean, 1)
    assert (bad.reason, bad.field) == (Reason.SYNTAX, "pg")
    assert f"stray token {char!r} after pg||" in bad.message


@pytest.mark.parametrize("original, damaged", [(b"pg||", b"pn||"), (b"pg||", b"vg||"), (b"pc|c6|", b"pn|c6|")])
def test_a_pair_damaged_into_pn_or_vg_costs_its_board_only(vugraph_sample, original, damaged):
    """One byte makes a board's pg|| or pc|c6| a file-level key, which would otherwise give every
    later board other names (or no event)."""
    data, clean = vugraph_sample
    at = data.index(original, data.index(b"qx|o17|"))
    items = list(parse_lin(data[:at] + damaged + data[at + len(original):], "f.lin"))
    bad = assert_only_board_lost(items, clean, 2)
    assert (bad.reason, bad.field) == (Reason.UNKNOWN_VALUE, damaged[:2].decode())
    assert bad.message in ("'' is not 4 or 8 names (S, W, N, E, per room)", "'c6' is not 4 or 8 names (S, W, N, E, "
                           "per room)", "vg is empty (no event, scoring or board numbers)")


@pytest.mark.parametrize("byte", [b"\xf5", b"\x00"])
def test_a_first_board_merged_into_the_header_costs_that_board_only(real_data, byte):
    """A byte in place of the first qx's '|' merges that board into the header. Its byte that is
    not UTF-8 is read as cp1252 and its UTF-8 'FAM²' stays; with a NUL the header is rejected, yet
    its pairs before the NUL still count: later boards keep their event, names and vg."""
    data = (real_data / "bbo_vugraph_alphabridge/raw_lin_data/443/44383.lin").read_bytes()
    clean = list(parse_lin(data, "f.lin"))
    at = data.index(b"qx|o17|") + 2
    items = list(parse_lin(data[:at] + byte + data[at + 1:], "f.lin"))
    assert len(items) == len(clean) == 16 and isinstance(items[0], Rejected)
    assert all(same_content(item, before) and item.tags == before.tags for item, before in zip(items[1:], clean[1:]))
    assert items[1].tags["vg"].endswith(",FAM²,0") and items[1].players is not None


def test_garbage_between_hand_records_never_merges_them():
    data = (FIXTURES / "hand_records.lin").read_bytes()
    clean = list(parse_lin(data, "f.lin"))
    at = data.index(b"\npn|")
    for byte in (b"\x00", b"\x81"):
        items = list(parse_lin(data[:at] + byte + data[at + 1:], "f.lin"))
        assert assert_only_board_lost(items, clean, 0).reason == Reason.UNDECODABLE_BYTES


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_a_byte_order_mark_names_the_encoding(real_data, encoding):
    data = (real_data / "bbo_vugraph_alphabridge/raw_lin_data/445/44503.lin").read_bytes()  # 'Høyland'
    clean = list(parse_lin(data, "f.lin"))
    bom = {"utf-8": codecs.BOM_UTF8, "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE,
           "utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}[encoding]
    items = list(parse_lin(bom + data.decode("utf-8").encode(encoding), "f.lin"))
    assert len(items) == len(clean) == 32
    for item, before in zip(items, clean):
        assert isinstance(item, BoardRecord) and same_content(item, before)
        assert (item.raw_text, item.source_line) == (before.raw_text, before.source_line)


def test_a_truncated_utf16_file_loses_its_last_board_only(vugraph_sample):
    data, clean = vugraph_sample
    items = list(parse_lin(codecs.BOM_UTF16_LE + data.decode().encode("utf-16-le")[:-1], "f.lin"))
    bad = assert_only_board_lost(items, clean, 5)
    assert (bad.reason, bad.field) == (Reason.UNDECODABLE_BYTES, "lin")
    assert bad.message == "byte 0x0a is not part of a UTF-16-LE character"  # half of the last '\n'
    assert bad.raw_text.endswith("pg||\r\\x0a")


def test_utf16_without_a_byte_order_mark_is_one_record_naming_it(vugraph_sample):
    (item,) = parse_lin(vugraph_sample[0].decode().encode("utf-16-le"), "f.lin")
    assert (item.reason, item.field) == (Reason.UNDECODABLE_BYTES, "lin")
    assert "UTF-16" in item.message and "byte order mark" in item.message


def _png() -> bytes:
    """A small real PNG image (4x4 RGB)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    pixels = zlib.compress(b"".join(b"\x00" + bytes(range(12)) for _ in range(4)))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))


@pytest.mark.parametrize("data", [_png(), random.Random(15).randbytes(20_000)], ids=["png", "random bytes"])
def test_a_binary_file_is_one_quarantined_record(data):
    (item,) = parse_lin(data, "image.lin")
    assert (item.reason, item.source_position, item.source_line) == (Reason.UNDECODABLE_BYTES, 0, 1)
    assert "binary data" in item.message
    assert item.raw_text.encode("utf-8").startswith(b"\\x89PNG" if data[:4] == b"\x89PNG" else b"")


def test_an_auction_without_a_dealer_names_md():
    items = list(parse_lin(b"qx|o1|md||sv|o|mb|p|\nqx|o2|sv|o|mb|p|\nqx|o3|md|0|mb|p|\n", "f.lin"))
    assert [(item.reason, item.field) for item in items] == [(Reason.UNKNOWN_VALUE, "md")] * 3
    assert [item.message.split(":")[0] for item in items] == [
        "md is empty (no deal, no dealer)", "no md (no deal, no dealer)", "md's dealer digit is 0 (no dealer)"]
    assert all(item.message.endswith("the auction needs a dealer") for item in items)


def test_a_junk_token_is_named_wherever_it_is(vugraph_sample):
    """'JUNK|' after each '|' of a real board: in a value's place it pushes the value to where a
    key should be, and the message must still name the junk, not the pushed value."""
    data, _ = vugraph_sample
    start, end = data.index(b"qx|o17|"), data.index(b"qx|c17|")
    board = data[start:end].rstrip()
    for at in [index + 1 for index, char in enumerate(board[:-1]) if char == ord("|")]:
        mutated = data[:start] + board[:at] + b"JUNK|" + board[at:] + data[start + len(board):]
        bad = list(parse_lin(mutated, "f.lin"))[2]
        assert bad.reason == Reason.SYNTAX, board[:at]
        before = board[:at].split(b"|")[-3 if board[:at].endswith(b"||") else -2]
        if board[:at].split(b"|")[-2] in (b"st", b"pg"):  # layout: any text reads as its value
            assert f"after {before.decode()}|JUNK|" in bad.message, bad.message
        else:
            assert "stray token 'JUNK'" in bad.message, (board[:at], bad.message)


# ------------------------------------------------------------------------------ damage that costs one board

@pytest.mark.parametrize("bad, field", [
    ("qx|o3000000000|" + MD, "qx"),  # above the int32 column
    ("qx|o\u00b2|" + MD, "qx"),
    ("qx|o\u0663|" + MD, "qx"),  # an Arabic-Indic 3: int() takes it, ASCII digits only
    ("qx|o2|" + MD + "mc|300|", "mc"),  # above the int8 column
    ("qx|o2|" + MD + "mc|\u0663|", "mc"),
])
def test_a_bad_number_quarantines_its_board_only(bad, field):
    data = f"qx|o1|{MD}\n{bad}\nqx|o3|{MD}".encode()
    first, rejected, last = read_checked(parse_lin, data, "f.lin")
    assert (rejected.reason, rejected.field) == (Reason.UNKNOWN_VALUE, field), rejected
    assert (first.board, last.board) == (1, 3)


def test_a_board_without_a_deal_auction_play_or_result_is_not_a_deal():
    lone, good = read_checked(parse_lin, f"qx|o1|\nqx|o2|{MD}".encode(), "f.lin")
    assert (lone.reason, lone.field) == (Reason.NOT_A_DEAL, "deal")
    assert good.board == 2


@pytest.mark.parametrize("mark", ["\ufeff", "\u200b"])
def test_a_byte_order_mark_or_zero_width_space_inside_the_file_is_dropped_and_listed(mark):
    header = "pn|a,b,c,d|"
    clean = read_checked(parse_lin, f"{header}\nqx|o1|{MD}\nqx|o2|{MD}".encode(), "f.lin")
    data = f"\ufeff{header}\nqx|o1|{MD}\n{mark}qx|o2|{MD}mc|1{mark}0|".encode()
    first, second = read_checked(parse_lin, data, "f.lin")
    assert first.repairs == [] and second.repairs == [Repair.INVISIBLE_CHARACTER_DROPPED]
    assert same_content(first, clean[0]) and second.claim == 10
    second.claim = None
    assert same_content(second, clean[1])


@pytest.mark.parametrize("junk", ["This is not LIN\n", "<html><body>Error 404|not found</body></html>\n",
                                  "Error: no such file\nTry again\n"])
def test_text_that_is_not_lin_between_boards_costs_only_itself(junk):
    header = "vg|Ev,S1,I,1,2,A,0,B,0|pn|s,w,n,e|\n"
    clean = read_checked(parse_lin, f"{header}qx|o1|{MD}mb|p|\nqx|o2|{MD}".encode(), "f.lin")
    first, bad, second = read_checked(parse_lin, f"{header}qx|o1|{MD}mb|p|\n{junk}qx|o2|{MD}".encode(), "f.lin")
    assert (bad.reason, bad.field, bad.source_line) == (Reason.UNKNOWN_FORMAT, "lin", 3)
    assert bad.raw_text == junk.strip()
    assert same_content(first, clean[0]) and same_content(second, clean[1])


def test_an_upper_case_qx_starts_its_own_board():
    first, second, third = read_checked(parse_lin, f"qx|o1|{MD}\nQX|o2|{MD}\nQx|c2|{MD}MB|p|".encode(), "f.lin")
    assert [item.board for item in (first, second, third)] == [1, 2, 2] and third.auction == [0]


def test_a_concatenated_files_header_starts_its_own_scope():
    one = f"vg|First,S1,I,1,2,A,0,B,0|pn|a,b,c,d|\nqx|o1|{MD}mb|p|\n"
    two = f"vg|Second,S1,I,1,2,A,0,B,0|rs|3NS=|\nqx|o1|{MD}mb|p|\n"
    first, second = read_checked(parse_lin, (one + two).encode(), "f.lin")
    assert (first.event, first.players) == ("First", ["c", "d", "a", "b"])
    assert (second.event, second.players, second.tags["rs"]) == ("Second", None, "3NS=")
    # an error message between the files costs only itself, and the second file keeps its header
    first, junk, second = read_checked(parse_lin, (one + "502 Bad Gateway\n" + two).encode(), "f.lin")
    assert junk.reason == Reason.UNKNOWN_FORMAT and (first.event, second.event) == ("First", "Second")
    # the same file's board with its own pn before its deal is one board
    (board,) = read_checked(parse_lin, f"qx|o1|pn|a,b,c,d|{MD}mb|p|".encode(), "f.lin")
    assert board.players == ["c", "d", "a", "b"]


def test_free_text_with_a_bar_makes_no_tag():
    (record,) = read_checked(parse_lin, f"qx|o1|{MD}mb|1H|an|5+ | xx | or more|mb|p|nt|a | zz |b|".encode(), "f.lin")
    assert record.explanations == ["5+ | xx | or more", None] and record.tags == {}
