"""The agent registry: every kind has a maker, and the kinds other packages make (dmc) are found
without their package being imported by hand."""

import subprocess
import sys

import pytest

from bridgeflow.dataset.errors import InputError
from bridgeflow.training.evaluation.agents import AGENT_KINDS, REGISTERED_BY, AgentFactory, maker
from bridgeflow.training.search.monte_carlo import SearchConfig


def test_every_kind_has_a_maker():
    assert [kind for kind in AGENT_KINDS if maker(kind) is None] == []
    with pytest.raises(InputError, match="unknown agent 'nobody@x': one of"):
        AgentFactory(None, None, SearchConfig()).make("nobody@x")


def test_a_kind_registered_elsewhere_is_imported_on_first_use():
    """In a fresh process: the evaluation alone imports no dmc module until a spec names dmc."""
    script = ("import sys\n"
              "from bridgeflow.training.evaluation import evaluate, challenge, generation\n"
              "from bridgeflow.training.evaluation.agents import maker\n"
              "assert not [name for name in sys.modules if name.startswith('bridgeflow.training.dmc')]\n"
              "assert maker('dmc') is not None\n"
              f"assert {sorted(REGISTERED_BY.values())!r} == sorted(set(sys.modules) & {set(REGISTERED_BY.values())!r})\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
