"""The shared replay buffer: a ring of decisions in shared-memory tensors, written by every actor
and sampled by the learner. DouZero hands each filled buffer to the learner once (free and full
queues); a ring sampled at random reuses decisions a few times instead, which keeps the learner
busy while two cores' actors are slow, at the cost of slightly staler returns."""

from __future__ import annotations

import multiprocessing

import numpy as np
import torch


class SharedBuffer:
    COLUMNS = {"hand": (torch.bool, (52,)), "dealer": (torch.int8, ()), "vul": (torch.int8, ()),
               "call": (torch.int64, ()), "ret": (torch.float32, ())}

    def __init__(self, capacity: int, max_calls: int, context=multiprocessing):
        self.capacity = capacity
        columns = self.COLUMNS | {"calls": (torch.int16, (max_calls,))}
        self.tensors = {name: torch.zeros((capacity, *shape), dtype=dtype).share_memory_()
                        for name, (dtype, shape) in columns.items()}
        self.written = context.Value("q", 0)  # decisions written in all (the ring's head is written % capacity)

    @property
    def filled(self) -> int:
        return min(self.written.value, self.capacity)

    def add(self, rows: dict[str, np.ndarray]) -> None:
        count = len(rows["call"])
        kept = {name: torch.from_numpy(values[-self.capacity:]) for name, values in rows.items()}  # a ring holds no more
        with self.written.get_lock():
            slots = torch.from_numpy((self.written.value + count - len(kept["call"]) + np.arange(len(kept["call"])))
                                     % self.capacity)
            for name, tensor in self.tensors.items():
                tensor[slots] = kept[name]
            self.written.value += count

    def sample(self, count: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        slots = torch.from_numpy(rng.integers(self.filled, size=count))
        with self.written.get_lock():
            return {name: tensor[slots].numpy() for name, tensor in self.tensors.items()}
