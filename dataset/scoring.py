"""Duplicate scoring (Law 77), the IMP scale (Law 78B) and par from a double-dummy table.

One implementation for the whole project: the DD stage stores par, evaluation and search score
millions of contracts. The scalar `contract_score` is the reference written from the Law; the
vectorised and par code read tables built from it, so they cannot drift apart."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from .encodings import NT, SEATS, STRAINS, is_vulnerable

# ---------------------------------------------------------------- Law 77


def contract_score(level: int, strain: int, doubled: int, vulnerable: bool, tricks: int) -> int:
    """Score for the declaring side; negative when the contract fails. `doubled`: 0, 1 (X), 2 (XX).
    `level` 0 is a passed-out board (0 whatever `tricks` says)."""
    level, strain, doubled, tricks = int(level), int(strain), int(doubled), int(tricks)  # numpy int8 overflows
    if level == 0:
        return 0
    if not (1 <= level <= 7 and 0 <= strain <= 4 and doubled in (0, 1, 2) and 0 <= tricks <= 13):
        raise ValueError(f"bad contract/result: level {level} strain {strain} doubled {doubled} tricks {tricks}")
    needed = level + 6
    if tricks < needed:
        down = needed - tricks
        if not doubled:
            return -down * (100 if vulnerable else 50)
        if vulnerable:
            penalty = 200 + 300 * (down - 1)
        else:  # 100 for the first, 200 for the second and third, 300 from the fourth
            penalty = 100 + 200 * min(down - 1, 2) + 300 * max(down - 3, 0)
        return -penalty * doubled  # redoubled undertricks are twice the doubled ones

    factor = (1, 2, 4)[doubled]
    per_trick = 20 if strain < 2 else 30  # minors 20, majors and NT 30 (NT: first trick 40)
    trick_points = (per_trick * level + (10 if strain == NT else 0)) * factor
    score = trick_points
    score += (500 if vulnerable else 300) if trick_points >= 100 else 50  # game or part-score
    if level == 6:
        score += 750 if vulnerable else 500
    elif level == 7:
        score += 1500 if vulnerable else 1000
    score += (0, 50, 100)[doubled]  # "for making a doubled or redoubled contract"
    overtricks = tricks - needed
    if doubled:
        score += overtricks * (200 if vulnerable else 100) * doubled
    else:
        score += overtricks * per_trick
    return score


def score_ns(level: int, strain: int, doubled: int, declarer: int, vul: int, tricks: int) -> int:
    """`contract_score` from North-South's viewpoint; `vul` is the board's (none=0, NS=1, EW=2, both=3)."""
    score = contract_score(level, strain, doubled, is_vulnerable(vul, declarer), tricks)
    return score if declarer % 2 == 0 else -score


def _score_table() -> np.ndarray:
    """[level 0..7][strain][doubled 0..2][vulnerable 0/1][tricks 0..13]; level 0 is all zeros."""
    shape = (8, 5, 3, 2, 14)
    scores = [contract_score(level, strain, doubled, bool(vulnerable), tricks)
              for level, strain, doubled, vulnerable, tricks in np.ndindex(shape)]
    table = np.array(scores, dtype=np.int32).reshape(shape)
    table.flags.writeable = False
    return table


SCORE_TABLE = _score_table()


def contract_scores(levels, strains, doubled, vulnerable, tricks) -> np.ndarray:
    """Vectorised `contract_score` (arguments broadcast together) -> int32 array."""
    args = [np.asarray(a, dtype=np.int64) for a in (levels, strains, doubled, vulnerable, tricks)]
    for name, values, high in zip(("levels", "strains", "doubled", "vulnerable", "tricks"), args, (7, 4, 2, 1, 13)):
        if values.size and (values.min() < 0 or values.max() > high):
            raise ValueError(f"{name} outside 0..{high}")
    return SCORE_TABLE[tuple(args)]


# ---------------------------------------------------------------- Law 78B

# Lower bound of each IMP band: 20-40 -> 1, 50-80 -> 2, ..., 4000 and more -> 24.
IMP_BOUNDS = (20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600, 750, 900, 1100, 1300, 1500,
              1750, 2000, 2250, 2500, 3000, 3500, 4000)
_IMP_BOUNDS_ARRAY = np.array(IMP_BOUNDS)


def imps(score_difference: int) -> int:
    """Signed IMPs for a total-point difference. A difference between two bands (possible only with
    averaged datums) gets the lower band."""
    value = bisect_right(IMP_BOUNDS, abs(score_difference))
    return value if score_difference >= 0 else -value


def imps_array(score_differences) -> np.ndarray:
    """Vectorised `imps` -> int8 array."""
    differences = np.asarray(score_differences)
    magnitude = np.searchsorted(_IMP_BOUNDS_ARRAY, np.abs(differences), side="right")
    return (np.sign(differences) * magnitude).astype(np.int8)


# ---------------------------------------------------------------- par
#
# Par follows DDS's DealerPar (dds-bridge/dds src/DealerPar.cpp, Soren Hein), the dealer-aware
# definition endplay.dds.par returns: the side that can make the highest contract has primacy
# (on a tie, whoever can bid it first from the dealer); it takes its best-scoring contract that
# the opponents cannot outbid with a cheaper doubled sacrifice, or else collects the sacrifice.
# Contracts are numbered like bids, 1 = 1C ... 35 = 7NT (call index - 2), so one level up is +5.

# [vulnerable][number] score for bidding and making exactly that contract, undoubled.
_MAKE = [[0] + [contract_score((n - 1) // 5 + 1, (n - 1) % 5, 0, bool(v), (n - 1) // 5 + 7) for n in range(1, 36)]
         for v in range(2)]
# [vulnerable][undertricks] penalty for a doubled sacrifice.
_PENALTY = [[0] + [-contract_score(7, 0, 1, bool(v), 13 - d) for d in range(1, 14)] for v in range(2)]
# [declarer vulnerable][defender vulnerable][number]: the most undertricks the defenders can afford
# in a doubled sacrifice that still costs less than the contract scores.
_TARGET = [[[max((d for d in range(14) if _PENALTY[vo][d] < _MAKE[vp][n]), default=0) for n in range(36)]
            for vo in range(2)] for vp in range(2)]


def _bonus_class(number: int) -> int:
    """0 part-score, 1 game, 2 small slam, 3 grand slam (the same for either vulnerability)."""
    level = (number - 1) // 5 + 1
    return 3 if level == 7 else 2 if level == 6 else int(_MAKE[0][number] >= 300)  # game bonus alone is 300


# The lowest contract of the same strain worth the same bonus: 4S+1 scores like 5S, 2C+2 like 4C.
_FLOOR = [0] + [min(m for m in range((n - 1) % 5 + 1, n + 1, 5) if _bonus_class(m) == _bonus_class(n))
                for n in range(1, 36)]
_NO_SACRIFICE = 99  # more undertricks than any sacrifice: it would have to go past 7NT


@dataclass(frozen=True)
class ParContract:
    """One par contract. `result` is overtricks (+) when it makes, undertricks (-) when it is a
    doubled sacrifice. A making contract is given at its lowest par level: 2C+2 means 2C, 3C and
    4C all score the par."""

    level: int
    strain: int  # C,D,H,S,NT = 0..4
    doubled: bool  # sacrifices are doubled, makes are not
    declarers: tuple[int, ...]  # one seat, or both seats of the side when either can declare it
    result: int

    @property
    def tricks(self) -> int:
        return self.level + 6 + self.result

    def __str__(self) -> str:
        """'4S-N', '2C-NS+2', '5HX-EW-2'."""
        seats = "".join(SEATS[seat] for seat in self.declarers)
        suffix = f"{self.result:+d}" if self.result else ""
        return f"{self.level}{STRAINS[self.strain]}{'X' if self.doubled else ''}-{seats}{suffix}"


@dataclass(frozen=True)
class Par:
    """The par score and every contract that achieves it, in DDS's order."""

    score: int  # North-South viewpoint
    contracts: tuple[ParContract, ...]  # empty when the board should be passed out

    def __str__(self) -> str:
        return " ".join(map(str, self.contracts)) if self.contracts else "pass"


_PASSED_OUT = Par(0, ())


def par(dd_table, dealer: int, vul: int) -> Par:
    """Par of a DD table (int8[4,5], [declarer N,E,S,W][strain C,D,H,S,NT]) for one dealer and
    vulnerability (none=0, NS=1, EW=2, both=3), as DDS DealerPar computes it."""
    return _ParSolver(dd_table).par(dealer, vul)


def par_all(dd_table) -> list[Par]:
    """Par for all 16 (dealer, vul), index dealer * 4 + vul: what the DD stage stores."""
    solver = _ParSolver(dd_table)
    return [solver.par(dealer, vul) for dealer in range(4) for vul in range(4)]


class _ParSolver:
    """One table's par. What does not depend on dealer or vulnerability is computed once, so
    `par_all` costs about a third of 16 separate `par` calls."""

    def __init__(self, dd_table):
        t = dd_table.tolist() if isinstance(dd_table, np.ndarray) else [list(row) for row in dd_table]
        if len(t) != 4 or any(len(row) != 5 for row in t) or not all(0 <= x <= 13 for row in t for x in row):
            raise ValueError("DD table must be 4 x 5 tricks 0..13: [declarer N,E,S,W][strain C,D,H,S,NT]")
        self.t = t
        # best[side][strain]: tricks the side takes; number[side][strain]: the contract needing
        # exactly that many (0 or below when the side cannot make a 1-level contract there).
        self.best = [[max(t[side][s], t[side + 2][s]) for s in range(5)] for side in range(2)]
        self.number = [[5 * (self.best[side][s] - 7) + s + 1 for s in range(5)] for side in range(2)]
        self.highest = [max(0, *numbers) for numbers in self.number]
        self._candidate_cache = {}  # (side, vulnerable) -> strains
        self._downs = {}  # (side, strain, dealer) -> undertricks per sacrifice strain
        self._contract_cache = {}  # (side, number, result) -> ParContract

    def par(self, dealer: int, vul: int) -> Par:
        number = self.number
        if self.highest[0] == self.highest[1] == 0:
            return _PASSED_OUT
        side = self._primacy(dealer)
        other = 1 - side
        side_vul = _SIDE_VUL[vul]
        make_score = _MAKE[side_vul[side]]
        target = _TARGET[side_vul[side]][side_vul[other]]
        numbers = number[side]

        best_plus, best_down = 0, 0
        sacrificed = None  # (strain, undertricks per sacrifice strain) of the highest candidate outbid
        making = []  # (strain, spare: target minus the cheapest sacrifice's undertricks)
        for strain in self._candidates(side, side_vul[side]):
            no = numbers[strain]
            downs = self._sacrifice_downs(side, strain, dealer)
            down = min(downs)
            if down <= target[no]:
                best_down = max(best_down, down)
                if sacrificed is None:
                    sacrificed = (strain, downs)
            else:
                best_plus = max(best_plus, make_score[no])
                making.append((strain, target[no] - down))

        sign = 1 if side == 0 else -1
        penalty = _PENALTY[side_vul[other]][best_down]
        if sacrificed is None or best_plus > penalty:
            contracts = []
            for strain, spare in making:
                no = numbers[strain]
                if make_score[no] == best_plus:
                    # Bid lower while the opponents still cannot profitably outbid, but never so
                    # low that a game or slam bonus is lost.
                    lowest = no if spare >= -1 else max(no + 5 * (spare + 1), _FLOOR[no])
                    contracts.append(self._contract(side, lowest, False, (no - lowest) // 5))
            return Par(sign * best_plus, tuple(contracts))

        strain, downs = sacrificed
        contracts = []
        if min(downs) == best_down:
            for sac_strain in range(5):
                if downs[sac_strain] != best_down:
                    continue
                if sac_strain != strain:
                    sac_no = number[other][sac_strain] + 5 * best_down
                    contracts.append(self._contract(other, sac_no, True, -best_down))
                else:
                    contracts.append(self._same_strain_sacrifice(side, strain, dealer, best_down))
        return Par(sign * penalty, tuple(contracts))

    def _candidates(self, side: int, vulnerable: bool) -> list[int]:
        """The strains of the side's contracts that might be par: from its top contract down to the
        cheapest one with the best score."""
        key = (side, vulnerable)
        strains = self._candidate_cache.get(key)
        if strains is None:
            numbers, make_score = self.number[side], _MAKE[vulnerable]
            makeable = [s for s in range(5) if numbers[s] >= 1]
            top_score = max(make_score[numbers[s]] for s in makeable)
            dearest = min(numbers[s] for s in makeable if make_score[numbers[s]] == top_score)
            strains = sorted((s for s in makeable if numbers[s] >= dearest), key=numbers.__getitem__, reverse=True)
            self._candidate_cache[key] = strains
        return strains

    def _primacy(self, dealer: int) -> int:
        """The side entitled to a plus score: it can make the highest contract; when both sides
        can make the same one, the side of the first player from the dealer who can."""
        high = self.highest
        if high[0] != high[1]:
            return 0 if high[0] > high[1] else 1
        strain = (high[0] - 1) % 5
        tricks = self.best[0][strain]
        return next(seat % 2 for seat in _ORDER[dealer] if self.t[seat][strain] == tricks)

    def _sacrifice_downs(self, side: int, strain: int, dealer: int) -> list[int]:
        """Undertricks the other side needs to outbid `side`'s top contract in `strain`, for each
        sacrifice strain (99 where that would go past 7NT)."""
        key = (side, strain, dealer)
        downs = self._downs.get(key)
        if downs is None:
            no = self.number[side][strain]
            other_numbers = self.number[1 - side]
            downs = []
            for sac_strain in range(5):
                if sac_strain != strain:
                    down = (no - other_numbers[sac_strain] + 4) // 5  # levels to climb, rounded up
                else:
                    down = min(d for _, d, _ in self._same_strain_bids(side, strain, dealer))
                downs.append(_NO_SACRIFICE if other_numbers[sac_strain] + 5 * down > 35 else down)
            self._downs[key] = downs
        return downs

    def _same_strain_bids(self, side: int, strain: int, dealer: int):
        """(seat, undertricks, contract number) for each opponent sacrificing in the contract's
        own strain: at the same level if they bid it before a player of `side` who makes it, one
        level higher otherwise."""
        no = self.number[side][strain]
        needed = self.best[side][strain]
        raised = 0
        for seat in _ORDER[dealer]:
            tricks = self.t[seat][strain]
            if seat % 2 == side:
                raised |= tricks == needed
            else:
                yield seat, needed - tricks + raised, no + 5 * raised

    def _same_strain_sacrifice(self, side: int, strain: int, dealer: int, down: int) -> ParContract:
        hits = [(sac_no, seat) for seat, d, sac_no in self._same_strain_bids(side, strain, dealer) if d == down]
        if len(hits) == 2 and hits[0][0] == hits[1][0]:
            return self._contract(1 - side, hits[0][0], True, -down)
        sac_no, seat = min(hits)  # the cheaper of two different bids
        return ParContract((sac_no - 1) // 5 + 1, strain, True, (seat,), -down)

    def _contract(self, side: int, no: int, doubled: bool, result: int) -> ParContract:
        """A contract for `side`, declared by whichever partner(s) take most tricks in its strain."""
        key = (side, no, result)  # `doubled` follows from the sign of `result`
        contract = self._contract_cache.get(key)
        if contract is None:
            strain = (no - 1) % 5
            most = self.best[side][strain]
            declarers = tuple(seat for seat in (side, side + 2) if self.t[seat][strain] == most)
            contract = self._contract_cache[key] = ParContract((no - 1) // 5 + 1, strain, doubled, declarers, result)
        return contract


_ORDER = [[(dealer + k) % 4 for k in range(4)] for dealer in range(4)]  # bidding order
_SIDE_VUL = [(vul in (1, 3), vul in (2, 3)) for vul in range(4)]  # (NS, EW) vulnerable
