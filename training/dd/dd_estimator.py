"""DDEstimator: a trained NN-DDA behind the DD-label layout, for batch use (Monte Carlo bidding,
or the ddlabel stage's fast labeller, whose rows must then say solver="nn-dda").

Tables come back exactly like the DD store's: int8 [n, declarer N,E,S,W, strain C,D,H,S,NT].
`symmetries` averages the model over a subgroup of the 96 exact DD symmetries (symmetry.GROUPS:
"id", "rot", "suits", "all"), at 1/4/24/96 times the cost; "all" makes it exactly equivariant.

As a labeller (checked full deals in, DD_LABELS rows out):
    est = DDEstimator.load("models/nndda/nndda.pt")
    cells = est.tables(owners).reshape(-1, 20)   # solver="nn-dda", solver_version=est.solver_version
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from bridgeflow.dataset.digests import digest
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.model_files import load_model_state, model_file

from . import symmetry
from .nndda_model import NNDDA, NNDDAConfig


class DDEstimator:
    def __init__(self, model: NNDDA, version: str = "untrained", batch_size: int = 4096):
        """batch_size: deals per forward pass. 4096 keeps the activations in cache: on 2 cores both
        architectures score 1.5x (mlp) to 2.5x (suits) faster than in batches of 65536
        (benchmarks/bench_nndda.py --batch N)."""
        self.model = model.eval()
        self.version = version
        self.batch_size = batch_size

    @classmethod
    def load(cls, path: str | Path) -> "DDEstimator":
        """The trainer's out folder (reads nndda.pt), its model file, or one of its resumable checkpoints."""
        path = model_file(path, "NN-DDA")
        state, data = load_model_state(path, "NN-DDA")
        try:
            model = NNDDA(NNDDAConfig(**NNDDAConfig.LEGACY | state["model_config"]))
            model.load_state_dict(state["model"])
        except (TypeError, RuntimeError) as error:  # another model's file, or weights of another shape
            raise InputError(f"NN-DDA {path}: not an NN-DDA model file ({str(error).splitlines()[0][:200]})") from None
        return cls(model, version=f"nn-dda:{digest(data, size=6)}")

    @property
    def solver_version(self) -> str:
        """For the DD store's solver_version column: names the exact weights used."""
        return self.version

    @torch.inference_mode()
    def _cells(self, owners: np.ndarray, symmetries: str) -> np.ndarray:
        """Per-cell probabilities [n, 20, 14] ("ce") or expected tricks [n, 20] ("mse"), averaged
        over the group in the original frame."""
        owners = torch.from_numpy(np.ascontiguousarray(owners, dtype=np.int8).reshape(-1, 52))
        group = symmetry.GROUPS[symmetries]
        ce = self.model.config.head == "ce"
        out = []
        for chunk in owners.split(self.batch_size):
            total = 0
            for g in group:
                raw = self.model(symmetry.transform_owners(chunk, g))
                total = total + symmetry.untransform_cells(raw.softmax(-1) if ce else raw, g)
            out.append(total / len(group))
        return torch.cat(out).numpy()

    def trick_distributions(self, owners: np.ndarray, symmetries: str = "id") -> np.ndarray:
        """owners int8[n, 52] -> float32[n, 4, 5, 14]: P(declarer takes k tricks), k = 0..13."""
        if self.model.config.head != "ce":
            raise ValueError("this model regresses tricks; it has no distributions")
        return self._cells(owners, symmetries).reshape(-1, 4, 5, 14)

    def expected_tricks(self, owners: np.ndarray, symmetries: str = "id") -> np.ndarray:
        """owners int8[n, 52] -> float32[n, 4, 5] expected DD tricks."""
        cells = self._cells(owners, symmetries)
        if cells.ndim == 3:
            cells = cells @ np.arange(14, dtype=np.float32)
        return cells.reshape(-1, 4, 5)

    @torch.inference_mode()
    def tables(self, owners: np.ndarray, symmetries: str = "id") -> np.ndarray:
        """owners int8[n, 52] -> int8[n, 4, 5] DD tables, the most likely tricks per cell."""
        if symmetries == "id" and self.model.config.head == "ce":  # fast path: argmax of the logits
            owners = np.ascontiguousarray(owners, dtype=np.int8).reshape(-1, 52)
            chunks = [self.model(torch.from_numpy(owners[start : start + self.batch_size])).argmax(-1)
                      for start in range(0, len(owners), self.batch_size)]
            return torch.cat(chunks).to(torch.int8).numpy().reshape(-1, 4, 5)
        cells = self._cells(owners, symmetries)
        tricks = cells.argmax(-1) if cells.ndim == 3 else np.clip(np.rint(cells), 0, 13)
        return tricks.astype(np.int8).reshape(-1, 4, 5)
