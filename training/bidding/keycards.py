"""Roman Key Card Blackwood (1430) by rule, on top of a BSM's call probabilities.

The BSMs learned 4NT but not its answers: asked for keycards, the shipped network answers 5D with
0, 1 or 2 of them, and the asker bids the slam whatever the answer (docs/search.md, "Keycards by
rule").
So 4NT carried no information, the search's deals could not be told apart by it, and its rollouts
scored 4NT as a blind jump to slam. Here both halves are played by rule, for every BSM-based
bidder (the `bsm` and `search` agents, the search's rollouts and its deal sampler):

- the answer to partner's 4NT with a trump suit agreed: 5C = 1 or 4 keycards (the four aces and
  the trump king), 5D = 0 or 3, 5H = 2 without the trump queen, 5S = 2 with it (5 count as 2);
- the asker's next call: two or more keycards missing, sign off (five of the trump suit, or pass
  the answer when it is that contract); one missing and the trump queen too, sign off; one missing
  and the queen unknown (5C or 5D answered), ask for it with the next step that is not the trump
  suit, when five of the trump suit is still above it: partner bids six with the queen or five
  trumps, five otherwise, and the asker passes; otherwise one missing, no grand slam and no 5NT.
  None missing and the queen unknown: the same queen ask; shown (six), the asker chooses among the
  slams as after the king answer below; denied (five), the small slam. None missing and the queen
  known to be missing: a small slam (six of the trump suit or 6NT, by the network's belief), no
  grand and no king ask. When the answer leaves two counts possible (0 or 3, 1 or 4),
  only what both allow is ruled out; a void in the asker's hand counts one keycard fewer missing
  (the ace of that suit is no loser). None missing and the trump queen known to be held (the
  asker's, or a 5S answer), with one count possible: 5NT, asking for kings;
- the answer to 5NT: the side kings held, 6C = 0, 6D = 1, 6H = 2, 6S = 3;
- the asker's call after it (or after the queen shown with none missing): the small slam (six of
  the trump suit, or passing it), 6NT, or the grand (seven of the trump suit, 7NT), by the
  network's belief in them; the search compares the grand slams whatever that belief
  (`grand_slams`), since deciding between six and seven is what the asks were for and the network
  never learned the answers.

A 4NT is a keycard ask when the asker's side has bid one suit by both partners (the trump suit:
the latest such), and the answer and the sign-off come after passes; anything else (4NT over a
notrump bid, interference, no suit agreed) is left to the network."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bridgeflow.dataset.encodings import NUM_CALLS, PASS, bid_index, bid_level, bid_strain, card_index, is_bid

FOUR_NT = bid_index(4, 4)
FIVE_NT = bid_index(5, 4)
ANSWERS = [bid_index(5, strain) for strain in range(4)]  # 5C 5D 5H 5S
GRAND_AND_5NT = np.array([bid_index(7, strain) for strain in range(5)] + [bid_index(5, 4)])
ACES = np.array([card_index(suit, 12) for suit in range(4)])


def agreed_trump(calls: Sequence[int], side: int) -> int | None:
    """The suit (0..3) both partners of `side` (the parity of their positions) have bid, the latest
    if several; None when they have agreed none. Once a major is agreed, another suit bid at the
    four level or higher is a cue bid (a control shown on the way to slam), not a new trump suit,
    even when partner had bid it before."""
    bidders: dict[int, set[int]] = {}
    trump = None
    for position in range(side, len(calls), 2):
        call = int(calls[position])
        if not is_bid(call) or bid_strain(call) == 4:
            continue
        suit = bid_strain(call)
        bidders.setdefault(suit, set()).add(position % 4)
        cue_bid = trump in (2, 3) and suit != trump and bid_level(call) >= 4
        if len(bidders[suit]) == 2 and not cue_bid:
            trump = suit
    return trump


def keycards(hand: np.ndarray, trump: int) -> tuple[int, bool]:
    """(keycards held, the trump queen held) of a bool[52] hand."""
    return int(hand[ACES].sum() + hand[card_index(trump, 11)]), bool(hand[card_index(trump, 10)])


def answer(held: int, queen: bool) -> int:
    """The 1430 answer to 4NT."""
    if held % 3 == 2:
        return ANSWERS[3] if queen else ANSWERS[2]
    return ANSWERS[0] if held % 3 == 1 else ANSWERS[1]


def partner_counts(answered: int, held: int) -> list[int]:
    """The keycard counts partner's `answered` call can mean, given the asker's own `held`."""
    shown = {ANSWERS[0]: (1, 4), ANSWERS[1]: (0, 3), ANSWERS[2]: (2, 5), ANSWERS[3]: (2, 5)}[answered]
    return [count for count in shown if count + held <= 5] or [min(shown)]


def queen_ask(answered: int, trump: int) -> int | None:
    """The step over a 5C/5D answer that asks for the trump queen (the next strain but the trump
    suit), or None when five of the trump suit would not be left above it."""
    step = answered + 1 + (answered + 1 == bid_index(5, trump))
    return step if step < bid_index(5, trump) else None


def situation(calls: Sequence[int]) -> tuple[str, int] | None:
    """(kind, trump) of the caller's call in a keycard sequence, kind one of "answer" (partner just
    asked), "ask" (partner answered the caller's 4NT), "queen" (partner asked for the trump queen
    after the caller's answer), "placed" (partner answered the caller's queen ask), "kings"
    (partner asked for kings with 5NT after the caller's answer), "counted" (partner answered the
    caller's 5NT); None outside one. `calls`: the auction so far."""
    n = len(calls)
    for back, kind in ((2, "answer"), (4, "ask"), (6, "queen"), (8, "placed")):
        if n < back or calls[n - back] != FOUR_NT or any(calls[n - k] != PASS for k in range(1, back, 2)):
            continue
        trump = agreed_trump(calls[:n - back], n % 2)
        if trump is None or (back > 2 and calls[n - back + 2] not in ANSWERS):
            return None
        if back > 4 and calls[n - back + 4] == FIVE_NT:
            return ("kings" if back == 6 else "counted"), trump
        if back > 4 and calls[n - back + 4] != queen_ask(calls[n - back + 2], trump):
            return None
        if back > 6 and calls[n - 2] not in (bid_index(5, trump), bid_index(6, trump)):
            return None
        return kind, trump
    return None


def grand_slams(hand: np.ndarray, calls: Sequence[int]) -> list[int]:
    """Seven of the trump suit and 7NT when the caller (holding `hand`) is the asker and all the
    keycards and the trump queen are known to be held: after partner's answer to 5NT, or partner's
    queen shown with none missing (the grand is the question); else []."""
    found = situation(calls)
    if found and (found[0] == "counted" or (found[0] == "placed" and _queen_shown_none_missing(hand, calls, found[1]))):
        return [bid_index(7, found[1]), bid_index(7, 4)]
    return []


def missing(hand: np.ndarray, answered: int, trump: int) -> tuple[int, list[int]]:
    """(the fewest keycards partner's answer `answered` to 4NT may leave missing, the counts it may
    mean) for the asker holding `hand`. A void in the asker's hand counts one fewer: the missing ace
    may be in it, no loser."""
    held = keycards(hand, trump)[0]
    counts = partner_counts(answered, held)
    fewest = 5 - held - max(counts)
    if (hand.reshape(4, 13).sum(axis=1) == 0).any():
        fewest = max(fewest - 1, 0)
    return fewest, counts


def _queen_shown_none_missing(hand: np.ndarray, calls: Sequence[int], trump: int) -> bool:
    """After partner answered the asker's queen ask (`calls` ends there): no keycard missing and six
    of the trump suit, the queen shown."""
    return calls[-2] == bid_index(6, trump) and missing(hand, int(calls[-6]), trump)[0] == 0


def ruled(probs: np.ndarray, hand: np.ndarray, calls: Sequence[int]) -> np.ndarray:
    """`probs` (float[38], the network's next call) with the keycard rules applied for the player
    holding `hand` (bool[52]) after `calls`; unchanged outside a keycard sequence."""
    found = situation(calls)
    if found is None:
        return probs
    kind, trump = found
    held, queen = keycards(hand, trump)
    if kind == "answer":
        return _only(answer(held, queen))
    if kind == "queen":  # five trumps count as the queen: with ten, the ace and king drop it 78% of the time
        trumps = int(hand.reshape(4, 13)[trump].sum())
        return _only(bid_index(6 if queen or trumps >= 5 else 5, trump))
    if kind == "placed":  # none missing: the queen shown (six) asks about the grand, denied (five) the small slam
        if missing(hand, int(calls[-6]), trump)[0] > 0:
            return _only(PASS)
        six = bid_index(6, trump)
        return slam_choice(probs, six, trump) if calls[-2] == six else _only(six)
    if kind == "kings":
        side_kings = sum(bool(hand[card_index(suit, 11)]) for suit in range(4) if suit != trump)
        return _only(bid_index(6, side_kings))
    if kind == "counted":
        return slam_choice(probs, int(calls[-2]), trump)
    answered = int(calls[-2])
    fewest_missing, counts = missing(hand, answered, trump)  # the answer may mean two counts: what both allow
    queen_missing = not queen and answered == ANSWERS[2]
    if fewest_missing >= 2 or (fewest_missing == 1 and queen_missing):
        sign_off = bid_index(5, trump)
        return _only(sign_off if sign_off > answered else PASS if sign_off == answered else bid_index(6, trump))
    step = queen_ask(answered, trump) if answered in ANSWERS[:2] else None
    if not queen and len(counts) == 1 and step is not None:
        return _only(step)
    if fewest_missing == 0:
        if queen_missing:
            return small_slam(probs, trump)
        queen_held = queen or answered == ANSWERS[3]
        return _only(FIVE_NT) if queen_held and len(counts) == 1 else probs
    kept = probs.copy()
    kept[GRAND_AND_5NT] = 0.0
    total = kept.sum()
    return kept / total if total > 0 else _only(bid_index(6, trump))


def small_slam(probs: np.ndarray, trump: int) -> np.ndarray:
    """Every keycard held but the trump queen missing: six of the trump suit or 6NT by the network's
    belief (six of the trump suit when it believes in neither)."""
    return _among(probs, [bid_index(6, trump), bid_index(6, 4)], bid_index(6, trump))


def slam_choice(probs: np.ndarray, answered: int, trump: int) -> np.ndarray:
    """The asker's call after partner's king answer `answered`: the network's belief restricted to
    the small slam in the trump suit (passing it when that was the answer), 6NT and the grand slams
    in the trump suit and notrump; the small slam (or the grand, when the answer passed six of
    the trump suit) when the network believes in none of them."""
    six, grand = bid_index(6, trump), bid_index(7, trump)
    allowed = [grand, bid_index(7, 4)] + [call for call in (six, bid_index(6, 4)) if call > answered]
    if answered == six:
        allowed.append(PASS)
    return _among(probs, allowed, PASS if answered == six else six if answered < six else grand)


def _among(probs: np.ndarray, allowed: list[int], fallback: int) -> np.ndarray:
    """`probs` restricted to the `allowed` calls, renormalized; `fallback` when it gives them none."""
    kept = np.zeros_like(probs)
    kept[allowed] = probs[allowed]
    total = kept.sum()
    return kept / total if total > 0 else _only(fallback)


def _only(call: int) -> np.ndarray:
    out = np.zeros(NUM_CALLS, np.float32)
    out[call] = 1.0
    return out


def apply(probs: np.ndarray, hands: np.ndarray, auctions: Sequence[Sequence[int]] | np.ndarray) -> np.ndarray:
    """Batched `ruled`: probs float[B, 38], hands bool[B, 52], B auctions (lists, or the rows of an
    int array of one length). Rows outside a keycard sequence are returned as they are."""
    if isinstance(auctions, np.ndarray):  # the search's rollouts: thousands of rows, few to look at
        width = auctions.shape[1]
        asked = np.zeros(len(auctions), bool)
        for back in (2, 4, 6, 8):
            if width >= back:
                asked |= auctions[:, width - back] == FOUR_NT
        rows = np.flatnonzero(asked)
    else:
        rows = [row for row, calls in enumerate(auctions) if FOUR_NT in calls[-8:]]
    out = probs
    for row in rows:
        changed = ruled(probs[row], hands[row], [int(c) for c in auctions[row]])
        if changed is not probs[row]:
            out = out.copy() if out is probs else out
            out[row] = changed
    return out
