"""`dmc@CHECKPOINT` at the evaluation's tables: the greedy Q network (q_model.DMCAgent), registered
with the evaluation's agent registry, which imports this module the first time a spec names dmc."""

from __future__ import annotations

from bridgeflow.dataset.errors import InputError
from bridgeflow.training.evaluation.agents import Agent, AgentFactory, agent_kind
from bridgeflow.training.model_files import model_file

from .q_model import DMCAgent, load_q


@agent_kind("dmc")
def dmc_agent(factory: AgentFactory, kind: str, checkpoint: str, spec: str) -> Agent:
    if not checkpoint:
        raise InputError(f"agent {spec!r}: dmc needs @CHECKPOINT (a `bridgeflow dmc train` --out or its q.pt)")
    return DMCAgent(load_q(factory.loaded(model_file(checkpoint, "DMC Q network"))), name=spec)
