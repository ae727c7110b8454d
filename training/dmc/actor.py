"""DMC actors: batches of duplicate auctions played in lockstep, every call epsilon-greedy from a
local copy of the Q network, and the decisions with their returns written to the shared buffer.

Lockstep: all unfinished auctions of a batch (deals x 2 tables) are answered by one forward pass
per step, so a batch costs about as many passes as its longest auction has calls. An auction that
reaches `max_calls - 3` calls is closed with passes (random doubles and redoubles could otherwise
keep it going up to 319 calls); those passes are decisions too."""

from __future__ import annotations

import numpy as np
import torch

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import PASS, deal_id, random_owner
from bridgeflow.dataset.splits import in_split
from bridgeflow.training.pools import end_with_parent

from .buffer import SharedBuffer
from .q_model import QNetwork, epsilon_greedy
from .reward import TABLES, Played


class DealSource:
    """Deals to play: with probability `store_share` a train-split deal of the DD store (an exact
    table), else a fresh random deal (scored by NN-DDA); dealer and vulnerability drawn uniformly."""

    def __init__(self, store_ids: np.ndarray, store_owners: np.ndarray, store_share: float, seed: int):
        train = in_split(store_ids, "train")
        self.ids, self.owners = store_ids[train], store_owners[train]
        self.share = store_share if len(self.ids) else 0.0
        self.seed, self.drawn = seed, 0
        self.rng = np.random.default_rng(seed)

    def draw(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        owners = np.zeros((count, 52), np.int8)
        ids = np.zeros(count, np.uint64)
        for row in range(count):
            if self.rng.random() < self.share:
                pick = self.rng.integers(len(self.ids))
                owners[row], ids[row] = self.owners[pick], self.ids[pick]
            else:
                owners[row] = random_owner(self.seed, self.drawn)
                ids[row] = deal_id(owners[row])
                self.drawn += 1
        return owners, ids, self.rng.integers(4, size=count), self.rng.integers(4, size=count)


def play_batch(network: QNetwork, owners: np.ndarray, deal_ids: np.ndarray, dealers: np.ndarray,
               vuls: np.ndarray, epsilon: float, rng: np.random.Generator, max_calls: int) -> Played:
    """Every deal at both tables, to the end of the auction, in lockstep."""
    states = [AuctionState.start(int(dealer)) for dealer in dealers for _ in range(TABLES)]
    deal_of = np.repeat(np.arange(len(owners)), TABLES)
    while True:
        active = [i for i, state in enumerate(states) if not state.finished]
        if not active:
            return Played(owners, deal_ids, dealers, vuls, states)
        width = max(len(states[i].calls) for i in active) or 1
        calls = np.full((len(active), width), -1, np.int16)
        hands = np.zeros((len(active), 52), bool)
        for row, i in enumerate(active):
            calls[row, :len(states[i].calls)] = states[i].calls
            hands[row] = owners[deal_of[i]] == states[i].to_call
        q = network.values(hands, calls, dealers[deal_of[active]], vuls[deal_of[active]])
        chosen = epsilon_greedy(q, epsilon, rng)
        for row, i in enumerate(active):
            states[i].add(PASS if len(states[i].calls) >= max_calls - 3 else int(chosen[row]))


def decisions(played: Played, returns: list[np.ndarray], max_calls: int) -> dict[str, np.ndarray]:
    """One row per call of every auction: the caller's hand, the calls before it, dealer,
    vulnerability, the call and its return (the buffer's columns)."""
    rows = sum(len(state.calls) for state in played.states)
    out = {"hand": np.zeros((rows, 52), bool), "calls": np.full((rows, max_calls), -1, np.int16),
           "dealer": np.zeros(rows, np.int8), "vul": np.zeros(rows, np.int8),
           "call": np.zeros(rows, np.int64), "ret": np.zeros(rows, np.float32)}
    row = 0
    for index, (state, values) in enumerate(zip(played.states, returns)):
        deal = index // TABLES
        for position, call in enumerate(state.calls):
            seat = (state.dealer + position) % 4
            out["hand"][row] = played.owners[deal] == seat
            out["calls"][row, :position] = state.calls[:position]
            out["dealer"][row], out["vul"][row] = played.dealers[deal], played.vuls[deal]
            out["call"][row], out["ret"][row] = call, values[position]
            row += 1
    return out


def actor_loop(index: int, config, reward_factory, shared: QNetwork, version, buffer: SharedBuffer,
               stop, store: tuple[np.ndarray, np.ndarray, np.ndarray], stretch: int = 0) -> None:
    """One actor process: play, write, and pick up the learner's weights when their version moves.
    Its deals and draws are seeded by (seed, actor, stretch), stretch the update a run resumed
    from, so a resumed run plays other deals. Stops when told, or when the learner's process is
    gone (killed: nothing else would stop it)."""
    end_with_parent()
    torch.set_num_threads(1)
    reward = reward_factory(config, store)
    network = QNetwork(shared.config)
    seen = -1
    seed = int(np.random.SeedSequence([config.seed, index, stretch]).generate_state(1)[0])
    source = DealSource(store[0], store[1], config.store_share, seed)
    rng = np.random.default_rng([seed, 1])
    while not stop.is_set():
        if version.value != seen:
            with version.get_lock():
                network.load_state_dict(shared.state_dict())
                seen = version.value
            network.eval()
        owners, ids, dealers, vuls = source.draw(config.deals_per_batch)
        played = play_batch(network, owners, ids, dealers, vuls, config.epsilon, rng, config.max_calls)
        buffer.add(decisions(played, reward.returns(played), config.max_calls))

