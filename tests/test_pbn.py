"""Tests of the PBN reader and writer (bridgeflow.dataset.pbn).

Expected values come from reading the fixture and real files by eye, never from the parser.

PBN verifier reference files (timheilman_pbn_conformance). Every game of correct_10/20/21.pbn is
accepted by parse_pbn + validate.check except two the record model cannot hold:

| file          | game | verdict                  | why                                                  |
|---------------|------|--------------------------|------------------------------------------------------|
| correct_10    | 3    | illegal_call auction[1]  | insufficient bids recorded with `^I` irregularities  |
| correct_20    | 31   | not_a_deal Deal          | an end position (12 cards per hand), not a deal      |

Games 4-17 and 20-24 of correct_10 ("Games without deal") hold tags but no deal, auction, play
or result: read without a syntax error, each is quarantined as not_a_deal (it holds no board).

errors_10/20/21.pbn hold one deliberate violation per game (game 23 of errors_10 is two chunks).
"accepted" means the record is kept, for the reason given; "read, no board" that the violation
is read without error, but the game holds no deal, auction, play or result (not_a_deal deal):

| file      | game  | violation (from the file)          | verdict                       | why accepted                          |
|-----------|-------|------------------------------------|-------------------------------|---------------------------------------|
| errors_10 | 1     | unknown tag                        | read, no board                | unknown tags are kept in `tags`       |
| errors_10 | 2, 3  | [Event], [Event No_quotes]         | syntax Event                  |                                       |
| errors_10 | 4     | tab in a value                     | read, no board                | text tags are kept as given           |
| errors_10 | 5-8   | bad Round, bad Date                | read, no board                | Round/Date are not interpreted        |
| errors_10 | 9     | Dealer "Black"                     | unknown_value Dealer          |                                       |
| errors_10 | 10    | Vulnerable "E"                     | unknown_value Vulnerable      |                                       |
| errors_10 | 11    | bad rank                           | bad_card Deal                 |                                       |
| errors_10 | 12    | SK in two hands                    | duplicate_card Deal           |                                       |
| errors_10 | 13-15 | hands of 12/14 cards               | wrong_hand_size Deal          |                                       |
| errors_10 | 16    | double space between hands         | accepted                      | hands are split on any whitespace     |
| errors_10 | 17    | 14 cards                           | wrong_hand_size Deal          |                                       |
| errors_10 | 18    | no cards                           | not_a_deal Deal               |                                       |
| errors_10 | 19    | Declarer "White"                   | unknown_value Declarer        |                                       |
| errors_10 | 20-21 | 5Hearts, 5NoTrump                  | unknown_value Contract        |                                       |
| errors_10 | 22    | Result "C-2"                       | unknown_value Result          |                                       |
| errors_10 | 23    | text outside tags; lone Note       | syntax game; read, no board   | a Note tag alone is harmless          |
| errors_10 | 24    | Auction without Dealer (no calls)  | read, no board                | the first caller is the dealer        |
| errors_10 | 25-27 | Play without deal/declarer/contract| accepted                      | no cards played, nothing to check     |
| errors_10 | 28-29 | first call not by the dealer       | illegal_call Auction          |                                       |
| errors_10 | 30    | call "1"                           | syntax Auction                |                                       |
| errors_10 | 31    | call "1N"                          | accepted                      | 1N is a common spelling of 1NT        |
| errors_10 | 32-34 | insufficient bid, bad X, bad XX    | illegal_call auction[n]       |                                       |
| errors_10 | 35    | bad suffixes, NAGs, notes          | syntax Auction                |                                       |
| errors_10 | 36-43 | Declarer/Contract against auction  | contract_mismatch contract    |                                       |
| errors_10 | 44    | revoke                             | accepted                      | validate does not check following suit|
| errors_10 | 45    | double suffix/NAG on cards         | accepted                      | play annotations are ignored          |
| errors_10 | 46    | note ref =a= in play               | syntax Play                   |                                       |
| errors_10 | 47    | card played twice                  | bad_play play[6]              |                                       |
| errors_10 | 48    | card "S1"                          | bad_card Play                 |                                       |
| errors_10 | 49-53 | misplaced ^R/^L marks              | accepted                      | irregularity marks are ignored        |
| errors_10 | 54-55 | Result without declarer            | accepted                      | the result is kept, not checked       |
| errors_10 | 56-57 | unused/missing notes               | accepted                      | a call without its note: no text      |
| errors_10 | 58    | ^I / ^9 without irregular declarer | accepted                      | marks ignored, ^9 is 9 tricks         |
| errors_10 | 59    | "NS 9 EW 2" (not 13)               | bad_result Result             |                                       |
| errors_10 | 60-61 | Result against a partial play      | accepted                      | only a 52-card play is scored         |
| errors_10 | 62    | '#' for Dealer, Deal, Auction ...  | unknown_value Dealer          |                                       |
| errors_10 | 63-67 | malformed Score* values            | read, no board                | scores are kept as text               |
| errors_10 | 68    | lines over 255 characters          | read, no board                | no line length limit                  |
| errors_10 | 69    | DEL and C1 characters              | undecodable_bytes game        |                                       |
| errors_10 | 70    | odd tag values                     | read, no board                | not interpreted                       |
| errors_10 | 71-72 | bad Note numbers                   | accepted                      | unreferenced notes                    |
| errors_10 | 73    | cards "CS", "DS"                   | bad_card Play                 |                                       |
| errors_10 | 74    | Note without its closing quote     | syntax Note                   |                                       |
| errors_20 | 1-6   | Scoring, ScoreRubberHistory values | read, no board                | not interpreted                       |
| errors_20 | 7-8   | '+' then cards in the play         | accepted                      | play stops at the card not yet played |
| errors_20 | 9-11  | calls after '+'                    | syntax Auction                |                                       |
| errors_20 | 12-13 | open string in a tag               | syntax ActionTable            |                                       |
| errors_20 | 14-16 | table column/element syntax        | read, no board                | other tables are kept verbatim        |
| errors_20 | 17    | '[' in a table                     | syntax tag                    |                                       |
| errors_20 | 18    | ']' in a table                     | syntax ActionTable            |                                       |
| errors_20 | 19    | '{' in a table                     | syntax ActionTable            |                                       |
| errors_20 | 20-21 | '}', missing elements              | read, no board                | stray '}' ignored                     |
| errors_20 | 22-23 | tables                             | accepted                      | tables verbatim                       |
| errors_21 | 1-2   | OptimumScore "100", "EW"           | read, no board                | OptimumScore is kept in `tags`        |
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import parse_call, parse_card
from bridgeflow.dataset.pbn import parse_pbn
from bridgeflow.dataset.pbn_writer import format_pbn
from bridgeflow.dataset.lin import format_lin
from bridgeflow.dataset.record import NOT_PLAYED, BoardRecord, Reason, Rejected, Repair
from bridgeflow.dataset.validate import check

from reader_checks import read_checked

FIXTURES = Path(__file__).parent / "pbn"
N, E, S, W = range(4)
C, D, H, SP, NT = range(5)
POSITION_FIELDS = {"source_file", "source_format", "source_position", "source_line", "raw_text"}
BASIC_DEAL = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 654.8765.876.876 32.432.5432.5432"


def parse_file(path: Path) -> list[BoardRecord | Rejected]:
    return list(parse_pbn(path.read_bytes(), path.name))


def fixture(name: str) -> list[BoardRecord | Rejected]:
    return parse_file(FIXTURES / name)


def cards(names: str) -> list[int]:
    return [parse_card(name) for name in names.split()]


def calls(names: str) -> list[int]:
    return [parse_call(name) for name in names.split()]


def line_of(path: Path, text: str) -> int:
    """1-based line of the first line containing `text`."""
    lines = path.read_bytes().decode("latin-1").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def owner_of(holder_by_card: dict[str, int]) -> dict[int, int]:
    return {parse_card(name): seat for name, seat in holder_by_card.items()}


def assert_same_record(got: BoardRecord, want: BoardRecord) -> None:
    for field in dataclasses.fields(BoardRecord):
        if field.name in POSITION_FIELDS:
            continue
        got_value, want_value = getattr(got, field.name), getattr(want, field.name)
        if field.name == "owner":
            assert (got_value is None) == (want_value is None), "owner"
            if want_value is not None:
                np.testing.assert_array_equal(got_value, want_value)
        else:
            assert got_value == want_value, field.name


def basic_owner() -> np.ndarray:
    owner = np.full(52, -1, dtype=np.int8)
    for seat, hand in enumerate(BASIC_DEAL[2:].split()):
        for suit_letter, holding in zip("SHDC", hand.split(".")):
            for rank in holding:
                owner[parse_card(suit_letter + rank)] = seat
    return owner


# ---------------------------------------------------------------- hand-written fixtures

def test_basic_game_fields():
    [record] = fixture("basic.pbn")
    assert isinstance(record, BoardRecord)
    assert (record.source_format, record.source_position, record.source_line) == ("pbn", 0, 3)
    assert record.raw_text.startswith('[Event "Club') and record.raw_text.endswith("2 Pass")
    assert record.event == 'Club "Night" \\ 1'
    assert (record.site, record.date, record.board, record.room) == ("Home", "2024.01.02", 5, "closed")
    assert record.players == ["Nick", "Eve", "Sam", "Wendy"]
    assert (record.dealer, record.vulnerability, record.scoring) == (N, 2, "IMP")
    np.testing.assert_array_equal(record.owner, basic_owner())
    assert (record.contract_level, record.contract_strain, record.contract_doubled) == (4, H, 1)
    assert (record.declarer, record.tricks, record.source_score) == (S, 10, "NS 790")
    assert record.tags == {"Round": "3", "ActionTable": "Rank;Call\n1 4H\n2 Pass"}


def test_basic_auction_alerts_and_notes():
    [record] = fixture("basic.pbn")
    assert record.auction == calls("2C P 2D P 2NT P 3H P 4H P P X P P P")
    assert record.alerts == [index in (6, 8) for index in range(15)]  # '3H !' and '4H $1'
    assert record.explanations == ["strong, artificial"] + [None] * 14


def test_basic_play_is_in_played_order():
    [record] = fixture("basic.pbn")
    # Hearts trump; W leads; N wins tricks 1-4, W ruffs trick 5 and leads trick 6; trick 7 is N's lead
    # of HA, E's HJ, then unknown cards.
    assert record.play == cards(
        "C2 CA C9 C6  SA S7 S4 S2  DA D9 D6 D2  SK S8 S5 S3  SQ S9 S6 H2  C3 CK CT C7  HA HJ")
    assert isinstance(check(record), BoardRecord)


def test_basic_double_dummy_tricks():
    [record] = fixture("basic.pbn")
    # "cbacb 98765 01234 3210d": declarer N, S, E, W; strains NT, S, H, D, C.
    assert record.dd_tricks == [11, 12, 10, 11, 12,  4, 3, 2, 1, 0,  5, 6, 7, 8, 9,  13, 0, 1, 2, 3]


def test_comments_escape_lines_and_tag_layout():
    path = FIXTURES / "syntax.pbn"
    first, second = parse_file(path)
    assert first.source_line == 2 and first.raw_text.startswith("{ A comment")
    assert (first.event, first.site, first.board, first.dealer, first.vulnerability) == (
        "Syntax", "Two tags on one line", 7, S, 3)
    assert first.contract_level == 0
    assert first.auction == [0, 0, 0, 0]  # '- - - AP' from the W column: S deals and all pass
    assert second.source_line == line_of(path, "; a whitespace-only line")  # its comment starts the game
    assert second.board == 8
    held = {seat: int((second.owner == seat).sum()) for seat in (-1, N, E, S, W)}
    assert held == {-1: 26, N: 13, E: 0, S: 13, W: 0}
    assert second.dd_tricks == [None] * 10 + [9] + [None] * 9  # BBA style one row: "S C 9"


def test_tag_copying_and_board_inheritance():
    path = FIXTURES / "copying.pbn"
    first, second, third, fourth, fifth = parse_file(path)
    assert (first.event, first.site, first.players) == ("Shared event", "Club", [None, None, None, "Ann"])
    # No Board and no Deal: another table's result on board 1.
    assert (second.event, second.site, second.board, second.dealer, second.vulnerability) == (
        "Shared event", "Club", 1, N, 0)
    np.testing.assert_array_equal(second.owner, first.owner)
    assert (second.players, second.declarer, second.contract_strain, second.tricks) == (
        [None, None, None, "Bob"], S, H, 10)
    # '#' copies the latest value and stops the '##' sharing.
    assert (third.event, third.site, third.board, third.players) == ("Shared event", None, 2, [None, None, None, "Bob"])
    assert isinstance(fourth, Rejected)
    assert (fourth.reason, fourth.field, fourth.source_line) == (Reason.UNKNOWN_VALUE, "Dealer", line_of(path, '"3"'))
    assert (fifth.event, fifth.board) == (None, 4)


def test_bad_games_are_quarantined_and_parsing_goes_on():
    path = FIXTURES / "errors.pbn"
    items = parse_file(path)
    verdicts = [(item.reason, item.field) if isinstance(item, Rejected) else "ok" for item in items]
    assert verdicts == [
        "ok",
        (Reason.WRONG_HAND_SIZE, "Deal"),
        (Reason.DUPLICATE_CARD, "Deal"),
        (Reason.BAD_CARD, "Deal"),
        (Reason.UNKNOWN_VALUE, "Vulnerable"),
        (Reason.UNKNOWN_VALUE, "Dealer"),
        (Reason.UNKNOWN_VALUE, "Contract"),
        (Reason.SYNTAX, "Event"),
        (Reason.SYNTAX, "Auction"),
        (Reason.BAD_CARD, "Play"),
        (Reason.SYNTAX, "Event"),
        (Reason.SYNTAX, "game"),
        "ok",
    ]
    assert [item.source_position for item in items] == list(range(13))
    assert items[3].message.startswith("hand '32.432.5432.543X'")
    assert items[10].source_line == line_of(path, "unterminated") and items[10].raw_text == '[Event "unterminated]'
    assert items[11].source_line == line_of(path, "hello")
    assert items[12].board == 3


def test_a_new_event_after_a_deal_starts_a_new_game():
    path = FIXTURES / "merged.pbn"
    first, second = parse_file(path)
    assert (first.event, first.board, first.auction, first.room) == ("First", 1, [0, 0, 0, 0], "open")
    assert (second.event, second.board, second.dealer, second.source_line) == (
        "Second", 2, E, line_of(path, "Second"))
    assert "Second" not in first.raw_text


def test_play_without_trump_and_unplayed_cards():
    first, second, third = fixture("partial.pbn")
    assert first.play == cards("ST S4 S2 SA HJ H5 H2 HA")  # column order, no contract to order by
    # N wins trick 1 with HA and leads DA; E plays D9; S's card is not played yet ('+').
    assert second.play == cards("HJ H5 H2 HA DA D9")
    assert (third.auction, third.play) == ([0, 0, 0, 0], None)


def test_a_card_not_played_keeps_its_place_and_the_rest_of_the_play():
    """PBN's `-` is a card not played: it stays in its trick as NOT_PLAYED (it cannot win it) and
    every later trick is kept, in played order; PBN writes it back as `-`, LIN's play stops there."""
    text = (FIXTURES / "basic.pbn").read_text().replace("D2 DA D9 D6\n", "- DA D9 D6\n")
    [record] = parse_pbn(text.encode("utf-8"), "x")
    assert record.play == cards("C2 CA C9 C6  SA S7 S4 S2") + cards("DA D9 D6") + [NOT_PLAYED] + cards(
        "SK S8 S5 S3  SQ S9 S6 H2  C3 CK CT C7  HA HJ")
    assert isinstance(check(record), BoardRecord)
    written = format_pbn(record)
    assert "\n- DA D9 D6\n" in written
    [back] = parse_pbn(written.encode("utf-8"), "x")
    assert back.play == record.play
    assert format_lin(record).count("pc|") == 11  # the cards before the one not played


def test_crlf_bom_and_lf_give_the_same_records():
    data = (FIXTURES / "basic.pbn").read_bytes() + b"\n" + (FIXTURES / "syntax.pbn").read_bytes()
    plain = list(parse_pbn(data, "x"))
    windows = list(parse_pbn(b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), "x"))
    assert len(plain) == len(windows) == 3
    for got, want in zip(windows, plain):
        assert_same_record(got, want)
        assert got.source_line == want.source_line


def test_old_mac_line_ends_are_line_breaks():
    # basic.pbn starts with '% PBN 2.1': with CR-only line ends the whole file was one '%' line.
    data = (FIXTURES / "basic.pbn").read_bytes() + b"\n" + (FIXTURES / "syntax.pbn").read_bytes()
    plain = list(parse_pbn(data, "x"))
    for line_end in (b"\r", b"\r\r\n"):  # old Mac; CRLF converted twice (one break, not two)
        got = list(parse_pbn(data.replace(b"\n", line_end), "x"))
        assert len(got) == len(plain) == 3, line_end
        for got_record, want in zip(got, plain):
            assert_same_record(got_record, want)
            assert got_record.source_line == want.source_line


UNICODE_GAMES = ((FIXTURES / "basic.pbn").read_text() + '\n[Event "Łódź ♠"]\n[Board "2"]\n').replace("\n", "\r\n")


@pytest.mark.parametrize("encoding, bom", [
    ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-32-le", codecs.BOM_UTF32_LE), ("utf-32-be", codecs.BOM_UTF32_BE),
])
def test_a_byte_order_mark_gives_the_encoding(encoding, bom):
    plain = list(parse_pbn(UNICODE_GAMES.encode("utf-8"), "x"))
    got = list(parse_pbn(bom + UNICODE_GAMES.encode(encoding), "x"))
    assert len(got) == len(plain) == 2 and got[1].event == "Łódź ♠"
    for got_record, want in zip(got, plain):
        assert_same_record(got_record, want)
        assert got_record.source_line == want.source_line


def test_bytes_that_are_not_text_are_named():
    no_bom = list(parse_pbn(UNICODE_GAMES.encode("utf-16-le"), "x"))
    assert [(item.reason, item.field) for item in no_bom] == [(Reason.UNDECODABLE_BYTES, "game")]
    assert no_bom[0].message == "NUL bytes between the characters: UTF-16 or UTF-32 text without a byte order mark"
    # A lone surrogate (0xD800) in the second game of a UTF-16 file: that game only.
    damaged = codecs.BOM_UTF16_LE + UNICODE_GAMES.replace("Łódź", "Ł\ud800dź").encode("utf-16-le", "surrogatepass")
    first, second = parse_pbn(damaged, "x")
    assert isinstance(first, BoardRecord) and second.reason is Reason.UNDECODABLE_BYTES
    assert second.message == "bytes that are not UTF-16-LE, the encoding the file's byte order mark names"
    [binary] = parse_pbn(b'[Event "x"]\n[Board "1\x01"]\n', "x")
    assert binary.message == "control character 0x01 on line 2 of the game: binary data, not text"


def test_each_game_is_decoded_on_its_own():
    games = [
        '[Event "Łódź"]'.encode("utf-8"),
        '[Event "Łódź"]'.encode("cp1250"),
        b'[Event "caf\xe9 \x98"]',  # 0x98 is not cp1250: latin-1
        b'[Event "binary\x00junk"]',
        b'[Event "last"]',
    ]
    items = list(parse_pbn(b"\n\n".join(games), "x"))
    assert [item.event for item in items if isinstance(item, BoardRecord)] == ["Łódź", "Łódź", "café \x98", "last"]
    assert (items[3].reason, items[3].source_line, items[3].source_position) == (Reason.UNDECODABLE_BYTES, 7, 3)


def test_a_control_character_where_the_empty_line_was_costs_one_game():
    first, second = '[Board "1"]\n[Deal "{}"]'.format(BASIC_DEAL), '[Board "2"]\n[Deal "{}"]\n'.format(BASIC_DEAL)
    for junk in ("\x00", "\x14"):
        items = list(parse_pbn(f"{first}{junk}\n{second}".encode(), "x"))
        assert [(item.source_position, item.source_line) for item in items] == [(0, 1), (1, 3)]
        assert items[0].reason is Reason.UNDECODABLE_BYTES and items[0].raw_text == first + junk
        assert isinstance(items[1], BoardRecord) and items[1].board == 2
    # before the first game, and in a chunk of comments only: still quarantined, never dropped
    before, alone = parse_pbn(f"% x\x01\n{first}\n\n% only\x02 comments\n".encode(), "x")
    assert (before.reason, before.source_line, before.raw_text) == (Reason.UNDECODABLE_BYTES, 1, f"% x\x01\n{first}")
    assert (alone.reason, alone.source_line, alone.source_position) == (Reason.UNDECODABLE_BYTES, 5, 1)


def test_note_references_glued_to_calls():
    game = '[Dealer "N"]\n[Auction "N"]\n1H Pass 4NT Pass\n5C=1 Pass 6H=2= Pass\nPass Pass\n[Note "1:one ace"]\n'
    [record] = parse_pbn(game.encode(), "x")
    assert record.auction == calls("1H P 4NT P 5C P 6H P P P")
    assert record.explanations == [None] * 4 + ["one ace"] + [None] * 5 and not any(record.alerts)


def test_passes_after_the_end_do_not_hide_the_trump_from_the_play():
    # basic.pbn without [Contract] and with a fifth pass: the play is still put in played order by
    # the auction's contract (4HX by S), and validate drops the extra pass.
    text = (FIXTURES / "basic.pbn").read_text().replace('[Contract "4HX"]\n', "").replace("\nAP\n", "\nPass Pass Pass Pass\n")
    [record] = parse_pbn(text.encode(), "x")
    [basic] = fixture("basic.pbn")
    assert record.play == basic.play and record.auction == basic.auction + [0]
    checked = check(record)
    assert checked.auction == basic.auction and checked.repairs == [Repair.TRAILING_PASSES_DROPPED]


@pytest.mark.parametrize("data", [b"", b"\n\n", b"% PBN 2.1\n% EXPORT\n", b"{ only a comment }\n\n% and a line\n"])
def test_no_games_yield_nothing(data):
    assert list(parse_pbn(data, "x")) == []


# ---------------------------------------------------------------- writer round trip

# Not the invisible characters every reader drops by design (dataset/text.py, drop_invisible).
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff\u200b\u2060"),
               min_size=1, max_size=12).filter(lambda text: not text.startswith("#"))
NOTE_TEXT = TEXT.map(str.strip).filter(bool)


@st.composite
def auctions(draw, dealer: int) -> list[int]:
    state = AuctionState.start(dealer)
    for _ in range(draw(st.integers(1, 24))):
        legal = np.flatnonzero(state.legal_mask()).tolist()
        if not legal:
            break
        state.add(draw(st.sampled_from(legal)))
    return state.calls


@st.composite
def records(draw) -> BoardRecord:
    record = BoardRecord(source_file="x", source_format="pbn", source_position=0, source_line=1)
    seats = st.integers(0, 3)
    known_hands = draw(st.sampled_from([0, 1, 2, 4]))
    if known_hands:
        owner = np.array(draw(st.permutations(list(range(4)) * 13)), dtype=np.int8)
        hidden = draw(st.permutations(range(4)))[:4 - known_hands]
        owner[np.isin(owner, hidden)] = -1
        record.owner = owner
    record.dealer = draw(st.none() | seats)
    record.vulnerability = draw(st.none() | st.integers(0, 3))
    record.board = draw(st.none() | st.integers(0, 999))
    record.event, record.site, record.date, record.scoring, record.source_score = (
        draw(st.none() | TEXT) for _ in range(5))
    record.room = draw(st.none() | st.sampled_from(["open", "closed"]) | TEXT.filter(
        lambda text: text.lower() not in ("open", "closed")))
    players = draw(st.lists(st.none() | TEXT, min_size=4, max_size=4))
    record.players = players if any(players) else None
    if record.dealer is not None and draw(st.booleans()):
        record.auction = draw(auctions(record.dealer))
        record.alerts = draw(st.lists(st.booleans(), min_size=len(record.auction), max_size=len(record.auction)))
        record.explanations = draw(st.lists(st.none() | NOTE_TEXT, min_size=len(record.auction),
                                            max_size=len(record.auction)))
    record.contract_level = draw(st.none() | st.integers(0, 7))
    if record.contract_level:
        record.contract_strain = draw(st.integers(0, 4))
        record.contract_doubled = draw(st.integers(0, 2))
    record.declarer = draw(st.none() | seats)
    record.tricks = draw(st.none() | st.integers(0, 13))
    record.play = draw(st.none() | st.lists(st.integers(0, 51), min_size=1, max_size=52, unique=True))
    record.dd_tricks = draw(st.none() | st.lists(st.none() | st.integers(0, 13), min_size=20, max_size=20).filter(
        lambda cells: any(cell is not None for cell in cells)))
    record.tags = draw(st.dictionaries(st.from_regex(r"X[A-Za-z0-9_]{0,8}", fullmatch=True), TEXT, max_size=3))
    return record


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_format_pbn_reads_back_to_the_same_record(record):
    [back] = parse_pbn(format_pbn(record).encode("utf-8"), "x")
    assert isinstance(back, BoardRecord), back
    assert_same_record(back, record)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), min_size=2, max_size=5))
def test_games_written_one_after_another_read_back_in_order(batch):
    data = "\n".join(format_pbn(record) for record in batch).encode("utf-8")
    back = list(parse_pbn(data, "x"))
    assert len(back) == len(batch)
    for got, want in zip(back, batch):
        assert_same_record(got, want)


def test_format_pbn_writes_the_standard_layout():
    [record] = fixture("basic.pbn")
    text = format_pbn(record)
    assert text.startswith('[Event "Club \\"Night\\" \\\\ 1"]\n[Site "Home"]\n[Date "2024.01.02"]\n[Board "5"]\n'
                           '[West "Wendy"]\n[North "Nick"]\n[East "Eve"]\n[South "Sam"]\n[Dealer "N"]\n')
    assert f'[Deal "{BASIC_DEAL}"]' in text
    assert '[Auction "N"]\n2C =1= Pass 2D Pass\n2NT Pass 3H ! Pass\n4H ! Pass Pass X\nPass Pass Pass\n' in text
    assert '[Play "W"]\nC2 CA C9 C6\nS2 SA S7 S4\n' in text and "\n- HA HJ -\n*\n" in text


# ---------------------------------------------------------------- robustness

STRUCTURE = st.sampled_from([bytes([byte]) for byte in b'[]{}";%\n\r\\=$!*+-^#:. \x00\x81\x9d\xff'] +
                            [b"\n\n", b'[Event "', b'[Deal "N:', b'"]\n', codecs.BOM_UTF16_LE, codecs.BOM_UTF8])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(FIXTURES.glob("*.pbn"))),
       st.lists(st.tuples(st.floats(0, 1), STRUCTURE | st.just(b"")), max_size=8))
def test_parse_pbn_never_raises_on_damaged_files(path, edits):
    data = path.read_bytes()
    for where, insert in edits:  # insert a byte sequence, or delete one byte
        cut = int(where * len(data))
        data = data[:cut] + insert + data[cut + (0 if insert else 1):]
    read_checked(parse_pbn, data, "x")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=300) | st.lists(STRUCTURE | st.binary(max_size=3), max_size=40).map(b"".join))
def test_parse_pbn_never_raises_on_any_bytes(data):
    read_checked(parse_pbn, data, "x")


# ---------------------------------------------------------------- real files

def simple_game_count(data: bytes) -> int:
    """Games counted without the parser: blank-line chunks with a line that starts a tag."""
    chunks = re.split(r"\n\s*\n", data.decode("latin-1"))
    return sum(1 for chunk in chunks if re.search(r"^\s*\[", chunk, re.M))


# Where the simple count differs, and why.
COUNT_EXCEPTIONS = {
    "errors_10.pbn": 1,  # game 23 starts with "bad characters": a game of untagged text
    "test_record_with_empty_line_in_comment.pbn": -1,  # the empty line is inside a { } comment
}


def test_every_real_pbn_file_parses(real_data):
    paths = sorted(real_data.rglob("*.pbn"))
    assert len(paths) == 535
    total = accepted = 0
    for path in paths:
        data = path.read_bytes()
        items = list(parse_pbn(data, str(path.relative_to(real_data))))
        assert [item.source_position for item in items] == list(range(len(items))), path
        assert len(items) == simple_game_count(data) + COUNT_EXCEPTIONS.get(path.name, 0), path
        checked = [item if isinstance(item, Rejected) else check(item) for item in items]
        file_accepted = sum(isinstance(item, BoardRecord) for item in checked)
        assert file_accepted + sum(isinstance(item, Rejected) for item in checked) == len(items)
        total += len(items)
        accepted += file_accepted
    # 20,801 games; rejected: 10 valet hand records with Vulnerable "´", 3 rpbridge games whose
    # auction or play contradicts the deal, and the conformance files' deliberate errors and 48
    # games without a board (tags only).
    assert (total, accepted) == (20801, 20691)


def verdicts(path: Path) -> dict[int, list[str]]:
    """Game number (from the file's '% ===== game N =====' lines) -> verdict of each item."""
    lines = path.read_bytes().decode("latin-1").splitlines()
    headers = [(number, int(match.group(1))) for number, line in enumerate(lines, 1)
               if (match := re.match(r"% =+ game (\d+)", line))]
    result: dict[int, list[str]] = {}
    for item in parse_file(path):
        item = item if isinstance(item, Rejected) else check(item)
        game = max(game for line, game in headers if line <= item.source_line)
        result.setdefault(game, []).append(
            f"{item.reason.value} {item.field}" if isinstance(item, Rejected) else "ok")
    return result


@pytest.mark.parametrize("name, game_count, rejected", [
    ("correct_10.pbn", 31, {3: ["illegal_call auction[1]"],
                            **{game: ["not_a_deal deal"] for game in [*range(4, 18), *range(20, 25)]}}),
    ("correct_20.pbn", 46, {31: ["not_a_deal Deal"]}),
    ("correct_21.pbn", 2, {}),
])
def test_conformance_correct_files(real_data, name, game_count, rejected):
    got = verdicts(real_data / "timheilman_pbn_conformance" / name)
    assert got == {game: rejected.get(game, ["ok"]) for game in range(1, game_count + 1)}


ERRORS_10 = {
    2: "syntax Event", 3: "syntax Event", 9: "unknown_value Dealer", 10: "unknown_value Vulnerable",
    11: "bad_card Deal", 12: "duplicate_card Deal", 13: "wrong_hand_size Deal", 14: "wrong_hand_size Deal",
    15: "wrong_hand_size Deal", 17: "wrong_hand_size Deal", 18: "not_a_deal Deal", 19: "unknown_value Declarer",
    20: "unknown_value Contract", 21: "unknown_value Contract", 22: "unknown_value Result",
    28: "illegal_call Auction", 29: "illegal_call Auction", 30: "syntax Auction", 32: "illegal_call auction[1]",
    33: "illegal_call auction[2]", 34: "illegal_call auction[3]", 35: "syntax Auction",
    **{game: "contract_mismatch contract" for game in range(36, 44)},
    46: "syntax Play", 47: "bad_play play[6]", 48: "bad_card Play", 59: "bad_result Result",
    62: "unknown_value Dealer", 69: "undecodable_bytes game", 73: "bad_card Play", 74: "syntax Note",
    **{game: "not_a_deal deal" for game in (1, 4, 5, 6, 7, 8, 24, 63, 64, 65, 66, 67, 68, 70)},
}
ERRORS_20 = {9: "syntax Auction", 10: "syntax Auction", 11: "syntax Auction", 12: "syntax ActionTable",
             13: "syntax ActionTable", 17: "syntax tag", 18: "syntax ActionTable", 19: "syntax ActionTable",
             **{game: "not_a_deal deal" for game in (1, 2, 3, 4, 5, 6, 14, 15, 16, 20, 21)}}


@pytest.mark.parametrize("name, game_count, rejected", [
    ("errors_10.pbn", 74, ERRORS_10),
    ("errors_20.pbn", 23, ERRORS_20),
    ("errors_21.pbn", 2, {1: "not_a_deal deal", 2: "not_a_deal deal"}),
])
def test_conformance_error_files(real_data, name, game_count, rejected):
    got = verdicts(real_data / "timheilman_pbn_conformance" / name)
    want = {game: [rejected.get(game, "ok")] for game in range(1, game_count + 1)}
    if name == "errors_10.pbn":
        want[23] = ["syntax game", "not_a_deal deal"]
    assert got == want


def test_bbo_helper_export(real_data):
    path = real_data / "lorserker_ben_pbn/Boards/BBO/Ben & Friends Daily - 2024-06-02 Daylong.pbn"
    first = parse_file(path)[0]
    # [Deal "W:82.AJ4.A854.A852 KJ9.KT653.JT.KT9 AQT65..Q9762.QJ3 743.Q9872.K3.764"]
    for card, seat in owner_of({"SA": E, "HA": W, "C2": W, "DK": S, "HK": N, "ST": E}).items():
        assert first.owner[card] == seat
    assert (first.dealer, first.board, first.players) == (N, 1, ["GIB", "GIB", "twooneben", "GIB"])
    assert first.auction == calls("P 1S P 2C P 2D P 3D P 5D P 6D P P P")
    assert first.explanations[1] == "Major suit opening -- 5+ !S; 11-21 HCP; 12-22 total points"
    assert first.explanations[11] == "4+ !C; 4+ !D; 17+ total points" and first.explanations[0] is None
    assert (first.contract_level, first.contract_strain, first.declarer, first.tricks) == (6, D, E, 11)
    assert first.source_score == "NS 50" and first.tags["ScorePercentage"] == "NS 51.32"
    # Rows "H2 H4 HK D2" and "D3 DA DT D6" in columns S W N E: S leads, E ruffs and leads D6.
    assert first.play[:8] == cards("H2 H4 HK D2 D6 D3 DA DT")
    # OptimumResultTable rows "N  H  6", "E NT  8", "W  D 12".
    assert (first.dd_tricks[N * 5 + H], first.dd_tricks[E * 5 + NT], first.dd_tricks[W * 5 + D]) == (6, 8, 12)


def test_bba_export(real_data):
    first = parse_file(real_data / "lorserker_ben_pbn/Boards/BBA/Weak natural 2M.pbn")[0]
    assert first.auction == calls("P 2H 3C P P P") and first.room == "open"  # [Room "Open"] then [Room "IMP"]
    assert (first.contract_level, first.contract_strain, first.declarer, first.tricks) == (3, C, S, 10)
    assert first.play is None  # [Play "W"] followed by a bare '*'
    assert first.dd_tricks == [None] * 10 + [9] + [None] * 9  # [OptimumResultTable "Declarer Suit Tricks"] S C 9


def test_bridgecomposer_shared_tags_and_dd(real_data, oracle_data):
    camrose = parse_file(real_data / "lorserker_ben_pbn/demo/camrose2024_BEN.pbn")
    assert [game.event for game in camrose[:3]] == ["camrose24_1"] * 3  # [Event "##camrose24_1"] once
    assert camrose[0].auction == calls("P 1C X XX P 1NT P 2S P 3S P P P")
    with_dd = parse_file(oracle_data / "pbn_with_dd/lorserker_ben/Camrose24_1.pbn")
    assert len(with_dd) == 160 and all(isinstance(game, BoardRecord) for game in with_dd)
    # Board 1: [DoubleDummyTricks "54555546658977889778"], declarer N, S, E, W; strains NT, S, H, D, C.
    assert with_dd[0].dd_tricks == [5, 5, 5, 4, 5,  8, 7, 7, 9, 8,  5, 6, 6, 4, 5,  8, 7, 7, 9, 8]


def test_traveller_in_a_non_utf8_file(real_data):
    games = parse_file(real_data / "jarekczek_pbntools_tests/test/test_4_kops_www_20130807/sm0807.pbn")
    assert games[0].event == "Turniej MONIKA Chorzów, 7.08.2013 r."  # byte 0xF3
    assert all(game.auction is None for game in games)


def test_rpbridge_games_without_board_and_deal(real_data):
    first, second, *_ = parse_file(real_data / "forrestrice_bridgebots_samples/shared_deals.pbn")
    assert (second.board, second.dealer, second.vulnerability, second.event, second.date) == (
        62, E, 0, "Spingold", "2014.07.??")
    np.testing.assert_array_equal(second.owner, first.owner)
    assert second.players == ["SchwartzO", "Fantoni", "FisherL", "Nunes"]
    assert (second.contract_level, second.contract_strain, second.contract_doubled, second.declarer) == (6, SP, 1, E)
    assert second.tags["Stage"] == "Final:4"
    assert isinstance(check(second), BoardRecord)


def test_bfc_alerts_and_copied_scoring(real_data):
    first, second, third = parse_file(real_data / "forrestrice_bridgebots_samples/sample.pbn")
    assert first.auction == calls("1H P 1S P 2C P 2H P 2S P 3NT P P P")
    assert [index for index, alert in enumerate(first.alerts) if alert] == [4]  # "2C !"
    assert first.explanations[2] == "0-4 !ss" and first.scoring == "IMP;Cross"
    assert second.board == 1 and second.tricks == 9  # [Result] after the play, commentary with a nested { }
    assert third.scoring == "IMP;Cross"  # [Scoring "#"]: the latest game that had the tag


def test_bba_note_references_glued_to_calls(shared_dir):
    path = shared_dir / "data/challenges/lorserker_ben/Challenges/Results/BW2-Result8663.pbn"
    games = [check(game) for game in parse_file(path)]
    assert len(games) == 40 and all(isinstance(game, BoardRecord) for game in games)
    assert games[0].auction == calls("P 2C P 2D P 2H P 3H P 4NT P 5C P 6H P P P")  # "... PASS 5C=1"


def test_robot_placeholder_results_are_unknown(shared_dir):
    # A BEN robot-result file: every board has a contract, [Result "0"], no play and no [Score].
    path = shared_dir / "data/challenges/lorserker_ben/Challenges/Results/oct13_feb23_nov23_jun24-BBA8663.pbn"
    games = [check(game) for game in parse_file(path)]
    assert len(games) == 40 and all(isinstance(game, BoardRecord) and game.contract_level for game in games)
    assert all(game.tricks is None and game.repairs == [Repair.PLACEHOLDER_RESULT_DROPPED] for game in games)
    assert (games[0].contract_level, games[0].contract_strain, games[0].declarer) == (6, H, N)  # Board 1: 6H by N


def test_a_passed_out_board_keeps_its_result(real_data):
    # camrose2024_BEN.pbn board 99: [Contract ""], [Result "0"], PASS PASS PASS PASS: nothing to doubt.
    games = parse_file(real_data / "lorserker_ben_pbn/demo/camrose2024_BEN.pbn")
    board = check(next(game for game in games if game.board == 99))
    assert (board.contract_level, board.tricks, board.repairs) == (0, 0, [])


def test_hand_records_with_dd_tables(real_data):
    games = parse_file(real_data / "valet_wbf_ebl_handrecords/data/2023-Training/handrecords/set4.pbn")
    accepted = [game for game in games if isinstance(game, BoardRecord)]
    assert len(games) == 32 and len(accepted) == 30  # two boards have [Vulnerable "´"]
    assert all(None not in game.dd_tricks for game in accepted)


# ------------------------------------------------------------------------------ damage that costs one board

def game(board: str = "1", deal: str = BASIC_DEAL, **tags: str) -> str:
    """One game with `tags` after its deal, in the order given."""
    lines = [f'[Board "{board}"]', '[Dealer "N"]', '[Vulnerable "None"]', f'[Deal "{deal}"]']
    lines += [f'[{name} "{value}"]' for name, value in tags.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bad, field", [
    (game(board="\u00b2"), "Board"),  # isdigit() takes it, int() does not
    (game(board="3000000000"), "Board"),  # above the int32 column
    (game(board="\u0663"), "Board"),  # an Arabic-Indic 3: int() takes it, ASCII digits only
    (game(Declarer="N", Contract="1NT", Result="\u00b9\u2070"), "Result"),
    (game(Declarer="N", Contract="1NT", Result="300"), "Result"),  # above the int8 column
    (game(Declarer="N", Contract="1NT", Result="NS \u00b9"), "Result"),
    (game(OptimumResultTable="Declarer;Denomination\\2R;Result\\2R") + "N NT \u00b9\u2070\n", "OptimumResultTable"),
])
def test_a_bad_number_quarantines_its_game_only(bad, field):
    items = read_checked(parse_pbn, (game("1") + "\n" + bad + "\n" + game("3")).encode(), "f.pbn")
    first, rejected, last = items
    assert (rejected.reason, rejected.field) == (Reason.UNKNOWN_VALUE, field), rejected
    assert (first.board, last.board) == (1, 3)


@pytest.mark.parametrize("text", ['[Event ""]\n[Deal ""]\n', '[Event "x"]\n[Board "4"]\n[Dealer "N"]\n'])
def test_a_game_without_a_deal_auction_play_or_result_is_not_a_deal(text):
    rejected, good = read_checked(parse_pbn, (text + "\n" + game("2")).encode(), "f.pbn")
    assert (rejected.reason, rejected.field) == (Reason.NOT_A_DEAL, "deal")
    assert good.board == 2
    # a traveller line without the deal is still a board played
    (traveller,) = read_checked(parse_pbn, b'[Board "5"]\n[Declarer "N"]\n[Contract "3NT"]\n[Result "9"]\n', "f.pbn")
    assert isinstance(traveller, BoardRecord) and traveller.tricks == 9


def test_tag_names_in_any_case_are_the_standards():
    other_deal = "N:T987.JT9.JT9.JT9 654.8765.876.876 32.432.5432.5432 AKQJ.AKQ.AKQ.AKQ"
    text = (game("1") + "\n" + f'[board "2"]\n[DEALER "E"]\n[vulnerable "NS"]\n[deal "{other_deal}"]\n'
            '[auction "E"]\n1NT Pass Pass Pass\n[MyTag "kept"]\n')
    first, second = read_checked(parse_pbn, text.encode(), "f.pbn")
    assert (second.board, second.dealer, second.vulnerability) == (2, E, 1)
    assert second.owner[parse_card("SA")] == W and second.auction == calls("1NT P P P")
    assert second.tags == {"MyTag": "kept"}


def test_games_without_empty_lines_keep_their_own_tags():
    with_event = ['[Event "a"]\n[Site "here"]\n[Date "2024.01.01"]\n' + game("1"),
                  '[Event "b"]\n[Site "there"]\n[Date "2024.01.02"]\n' + game("2")]
    without_event = ['[Site "here"]\n[Date "2024.01.01"]\n[Dealer "N"]\n' + f'[Deal "{BASIC_DEAL}"]\n',
                     '[Site "there"]\n[Date "2024.01.02"]\n[Dealer "E"]\n' + f'[Deal "{BASIC_DEAL}"]\n']
    for games in (with_event, without_event):
        first, second = read_checked(parse_pbn, "".join(games).encode(), "f.pbn")
        assert (first.site, first.date, second.site, second.date) == ("here", "2024.01.01", "there", "2024.01.02")
    first, second = read_checked(parse_pbn, "".join(without_event).encode(), "f.pbn")
    assert (first.dealer, second.dealer) == (N, E)


def test_a_comment_closed_by_the_wrong_bracket_never_swallows_tags():
    text = (game("1") + "{a note closed by the wrong bracket]\n" + '[Declarer "N"]\n[Contract "1NT"]\n[Result "7"]\n'
            "[Auction \"N\"]\n1NT Pass Pass Pass\n{a later comment}\n" + game("2"))
    bad, good = read_checked(parse_pbn, text.encode(), "f.pbn")
    assert (bad.reason, bad.field) == (Reason.SYNTAX, "Deal"), bad
    assert bad.message.startswith("unterminated comment on line 5")
    assert good.board == 2


@pytest.mark.parametrize("mark", ["\ufeff", "\u200b"])
def test_a_byte_order_mark_or_zero_width_space_inside_the_file_is_dropped_and_listed(mark):
    clean = read_checked(parse_pbn, (game("1") + "\n" + game("2")).encode(), "f.pbn")
    first, second = read_checked(parse_pbn, (game("1") + "\n" + mark + game("2").replace("None", "No" + mark + "ne"))
                                 .encode(), "f.pbn")
    assert first.repairs == [] and second.repairs == [Repair.INVISIBLE_CHARACTER_DROPPED]
    second.repairs = []
    assert_same_record(second, clean[1])
    cp1250 = ((game("1") + "\n").encode("cp1250") + codecs.BOM_UTF8 + game("2").encode()
              + '[Event "\u0159"]\n'.encode("cp1250"))
    _, second = read_checked(parse_pbn, cp1250, "f.pbn")
    assert second.board == 2 and second.repairs == [Repair.INVISIBLE_CHARACTER_DROPPED]
