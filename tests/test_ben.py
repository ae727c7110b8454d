"""BEN at the table (training/evaluation/ben.py, contrib/ben_server): the call mapping, the
JSON-lines protocol, boards played by `ben-nosearch`, determinism (a null match is exactly 0), a
killed or silent server restarted with the call replayed, the parallel evaluation's servers, a
partnership with BEN against two BENs, the dds3 shim against our DDS, and BEN's search reaching it.

Needs BEN's folder in ../shared (skipped without it, failed under BRIDGEFLOW_REQUIRE_SHARED); the
BEN virtualenv is built in the session if it is missing (pip, about 15 s)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bridgeflow.dataset import dd
from bridgeflow.dataset.encodings import (VUL_NAMES, call_name, deal_to_pbn, duplicate_dealer, duplicate_vulnerability,
                                          hand_to_pbn, hands_from_owner, parse_call, parse_pbn_hand, random_owner)
from bridgeflow.training.evaluation import ben
from bridgeflow.training.evaluation import evaluate as ev
from bridgeflow.training.evaluation.agents import AGENT_KINDS, AgentFactory, RuleAgent
from bridgeflow.training.evaluation.boards import Boards
from bridgeflow.training.evaluation.matches import partner_gain, team_match
from bridgeflow.training.evaluation.table import play
from bridgeflow.training.search.monte_carlo import SearchConfig

BOARDS = 6
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def ben_python(ben_dir) -> str:
    """The BEN server's Python (its virtualenv built if missing), for BEN in ../shared."""
    assert ben.ben_home() == ben_dir or "BRIDGEFLOW_BEN" in os.environ
    return str(ben.ensure_venv())


@pytest.fixture(scope="module")
def server(ben_python):
    started = ben.BenServer()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def boards() -> Boards:
    """Random deals with random DD tables (only the scoring reads them)."""
    owners = np.stack([random_owner(31, index) for index in range(BOARDS)])
    tables = np.random.default_rng(1).integers(0, 14, (BOARDS, 4, 5)).astype(np.int8)
    return Boards(np.arange(BOARDS, dtype=np.uint64), owners, tables)


def test_calls_map_to_bens_spelling_and_ids():
    assert ben.BEN_CALLS[:4] == ("PASS", "X", "XX", "1C") and ben.BEN_CALLS[-1] == "7N"
    for call, name in enumerate(ben.BEN_CALLS):
        ours = call_name(call)
        assert name == {"P": "PASS"}.get(ours, ours.replace("NT", "N"))
        assert ben.CALL_OF[name] == call
    # BEN's own ids (src/bidding/bidding.py): PAD_START 0, PAD_END 1, PASS 2, X 3, XX 4, 1C 5 .. 7N 39.
    bens_ids = {"PASS": 2, "X": 3, "XX": 4, **{f"{level}{strain}": 5 + 5 * (level - 1) + index
                                              for level in range(1, 8) for index, strain in enumerate("CDHSN")}}
    assert all(bens_ids[name] == call + 2 for call, name in enumerate(ben.BEN_CALLS))


def test_vulnerability_and_request():
    assert [ben.vulnerability_pair(vul) for vul in range(4)] == [[False, False], [True, False], [False, True], [True, True]]
    assert VUL_NAMES == ("None", "NS", "EW", "All")
    request = ben.ben_request(parse_pbn_hand("AKT963.A6.AKT9.6"), [0, 3, 1], 2, 3, False)
    assert request == {"hand": "AKT963.A6.AKT9.6", "dealer": 2, "vulnerability": [True, True],
                       "auction": ["PASS", "1C", "X"], "search": False}


def test_protocol_round_trip(ben_python):
    """The raw protocol: a ready line, a call per request, a JSON error (never a hang) for a bad
    line or field, and the end of stdin ends the server."""
    requests = [{"hand": "AKT963.A6.AKT9.6", "dealer": 1, "vulnerability": [False, False], "auction": ["PASS"] * 3},
                "not json", {"hand": "AKQ", "dealer": 0, "vulnerability": [False, False], "auction": []},
                {"hand": "AKT963.A6.AKT9.6", "dealer": 1, "vulnerability": [False, False], "auction": ["1X"]}]
    lines = [request if isinstance(request, str) else json.dumps(request) for request in requests]
    done = subprocess.run([ben_python, str(ben.SERVER_FOLDER / "ben_server.py"), "--ben", str(ben.ben_home())],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[0]["ready"] is True and len(replies) == 1 + len(requests)
    assert replies[1]["call"] == "1S" and replies[1]["seconds"] > 0
    assert "JSONDecodeError" in replies[2]["error"]
    assert "hand 'AKQ'" in replies[3]["error"]
    assert "auction" in replies[4]["error"]


def test_a_bad_request_is_an_error_not_a_restart(server):
    with pytest.raises(ben.BenFailed, match="hand"):
        server.bid({"hand": "AKQ", "dealer": 0, "vulnerability": [False, False], "auction": []})
    assert server.restarts == 0
    assert server.bid(ben.ben_request(parse_pbn_hand("AKT963.A6.AKT9.6"), [0, 0, 0], 1, 0, False))["call"] == "1S"


def test_where_bens_search_raises_ben_makes_its_networks_call(server):
    """BEN's search raises on 4NT with interference (1S P 4H P 4NT 5NT); `ben` then makes the call
    of BEN's network alone, as `ben-nosearch` does, instead of ending the match."""
    hand, auction = parse_pbn_hand("KT963.3.KQT9.A43"), [parse_call(c) for c in "1S P 4H P 4NT 5NT".split()]
    with pytest.raises(ben.BenRefused):
        server.bid(ben.ben_request(hand, auction, 2, 3, True))
    alone = ben.BenAgent("ben-nosearch", server).next_call(hand, auction, 2, 3)
    assert ben.BenAgent("ben", server).next_call(hand, auction, 2, 3) == alone == parse_call("6S")


def test_an_agent_starts_its_server_at_its_first_call_not_when_made(ben_python, monkeypatch):
    """A parallel evaluation makes its agents in the parent, which plays no board: no idle server there."""
    started = []

    class Server:
        def __init__(self):
            started.append(self)

        def bid(self, request, timeout=None):
            return {"call": "PASS", "seconds": 0.0}

    monkeypatch.setattr(ben, "BenServer", Server)
    monkeypatch.setattr(ben, "_server", None)
    agent = ben.BenAgent("ben-nosearch")
    assert started == []
    assert agent.next_call(parse_pbn_hand("KT963.3.KQT9.A43"), [], 0, 0) == parse_call("P")
    agent.next_call(parse_pbn_hand("KT963.3.KQT9.A43"), [], 0, 0)
    assert len(started) == 1


def test_ben_nosearch_plays_boards_and_its_null_match_is_zero(server, boards):
    """Deterministic: BEN at every seat of both tables gives both the same auction, so 0 IMPs."""
    agent = ben.BenAgent("ben-nosearch", server)
    rows = team_match("ben-nosearch:ben-nosearch", agent, agent, boards, seed=0)
    assert [row["imps"] for row in rows] == [0.0] * BOARDS
    assert all(row["auctions"][0] == row["auctions"][1] for row in rows)
    assert sum(contract != "Pass" for row in rows for contract in row["contracts"]) >= BOARDS
    assert len(agent.seconds) == sum(len(row["auctions"][0]) + len(row["auctions"][1]) for row in rows)


def test_against_rule_the_same_twice(server, boards):
    agent = ben.BenAgent("ben-nosearch", server)
    first = team_match("ben-nosearch:rule", agent, RuleAgent(), boards, seed=0)
    again = team_match("ben-nosearch:rule", agent, RuleAgent(), boards, seed=5)
    assert [row["auctions"] for row in first] == [row["auctions"] for row in again]


class Killer:
    """BEN, whose server is killed just before its `at`-th call (the board goes on)."""

    def __init__(self, agent: ben.BenAgent, at: int):
        self.agent, self.at, self.calls, self.name = agent, at, 0, agent.name

    def next_call(self, hand, auction, dealer, vul):
        self.calls += 1
        if self.calls == self.at:
            self.agent.server.process.kill()
            self.agent.server.process.wait()
        return self.agent.next_call(hand, auction, dealer, vul)

    def reseed(self, seed):
        pass


def test_a_killed_server_is_restarted_and_the_call_replayed(ben_python, server, boards):
    reference = team_match("m", ben.BenAgent("ben-nosearch", server), RuleAgent(), boards, seed=0)
    fresh = ben.BenServer()
    try:
        killer = Killer(ben.BenAgent("ben-nosearch", fresh), at=5)  # mid-board: board 1 has more calls
        rows = team_match("m", killer, RuleAgent(), boards, seed=0)
        assert fresh.restarts == 1 and len(fresh.startup_seconds) == 2
    finally:
        fresh.stop()
    assert [row["auctions"] for row in rows] == [row["auctions"] for row in reference]
    assert [row["imps"] for row in rows] == [row["imps"] for row in reference]


def test_a_server_that_keeps_failing_raises(ben_python):
    silent = ben.BenServer(call_timeout={False: 1e-6, True: 1e-6})
    try:
        with pytest.raises(ben.BenFailed, match=f"failed {ben.ATTEMPTS} times on one call.*timeout"):
            silent.bid(ben.ben_request(parse_pbn_hand("AKT963.A6.AKT9.6"), [], 0, 0, False))
        assert silent.restarts == ben.ATTEMPTS - 1
    finally:
        silent.stop()


def test_parallel_evaluation_matches_serial(ben_python, boards):
    """Two workers, each with its own BEN server, play the same boards as one process."""
    matches = ["ben-nosearch:rule"]
    factory = AgentFactory(None, None, SearchConfig())
    try:
        serial, _ = ev.evaluate(ev.EvalConfig(boards=BOARDS, matches=matches, workers=1), boards, factory)
        parallel, _ = ev.evaluate(ev.EvalConfig(boards=BOARDS, matches=matches, workers=2), boards, factory)
    finally:
        factory.close()
    assert ben.ben_files()["bidder"].as_posix() in factory.checkpoints
    for key in ("mean_imps", "boards"):
        assert serial["matches"]["ben-nosearch:rule"][key] == parallel["matches"]["ben-nosearch:rule"][key]


def test_a_partnership_with_ben_against_two_bens(ben_python, boards):
    """`partner:A+ben-nosearch`: A in each seat with BEN as its partner against two BENs, scored
    against BEN at all four seats; with A = BEN every table bids alike and the match is 0."""
    matches = ["partner:ben-nosearch+ben-nosearch", "partner:rule+ben-nosearch"]
    factory = AgentFactory(None, None, SearchConfig())
    try:
        metrics, rows = ev.evaluate(ev.EvalConfig(boards=BOARDS, matches=matches), boards, factory)
    finally:
        factory.close()
    null, with_rule = ([row for row in rows if row["match"] == match] for match in matches)
    assert [row["imps"] for row in null] == [0.0] * BOARDS
    assert all(len(set(map(tuple, row["auctions"]))) == 1 for row in null)
    assert [row["auctions"][0] for row in with_rule] == [row["auctions"][0] for row in null]
    assert any(row["auctions"][1:] != row["auctions"][:1] * 4 for row in with_rule)  # rule bids otherwise somewhere
    assert [row["imps"] for row in with_rule] == [partner_gain(row["scores_ns"]) for row in with_rule]
    assert set(metrics["matches"]["partner:rule+ben-nosearch"]["time_per_decision"]) == {"rule", "ben-nosearch"}


def test_factory_names_ben_agents():
    factory = AgentFactory(None, None, SearchConfig())
    with pytest.raises(ValueError, match="no @CHECKPOINT"):
        factory.make("ben@x.pt")
    assert {"ben", "ben-nosearch"} <= set(AGENT_KINDS)


def run_in_ben_venv(ben_python: str, code: str) -> str:
    env = os.environ | {"PYTHONPATH": str(ben.SERVER_FOLDER / "stubs"), "BEN_HOME": str(ben.ben_home())}
    done = subprocess.run([ben_python, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_dds3_shim_agrees_with_our_dds(ben_python):
    """The shim's SolveBoardPBN (BEN's libdds.so) against our DDS tables, every strain and leader:
    the leader's side takes `score` tricks, the declarer (the leader's right) the rest."""
    owners = [random_owner(41, index) for index in range(3)]
    code = ("import dds3, json, sys\n"
            f"deals = {[deal_to_pbn(owner) for owner in owners]!r}\n"
            "print(json.dumps([[[dds3.solve_board_pbn(deal, trump=trump, first=first, solutions=1)['score'][0]"
            " for first in range(4)] for trump in range(5)] for deal in deals]))")
    leaders = json.loads(run_in_ben_venv(ben_python, code))
    with dd.Solver() as solver:
        tables = solver.solve(owners)
    for table, by_trump in zip(tables, leaders):
        for our_strain in range(5):
            for declarer in range(4):
                leader = (declarer + 1) % 4
                assert table[declarer * 5 + our_strain] == 13 - by_trump[dd.DDS_STRAIN[our_strain]][leader]


def test_bens_search_reaches_the_dd_solver(ben_python):
    """`ben`: BEN's search solves sampled deals through the shim (counted) and bids, the same twice;
    `ben-nosearch` on the same call never solves."""
    code = ("import sys, json\n"
            "sys.stdout = sys.stderr\n"  # BEN's prints
            f"sys.argv = ['ben_server', '--ben', {str(ben.ben_home())!r}]\n"
            f"sys.path[:0] = [{str(ben.SERVER_FOLDER)!r}, {str(ben.ben_home() / 'src')!r}]\n"
            "import dds3, ben_server\n"
            "solve, solved = dds3.solve_board_pbn, []\n"
            "dds3.solve_board_pbn = lambda *a, **k: solved.append(1) or solve(*a, **k)\n"
            "bidders = ben_server.Bidders(__import__('pathlib').Path(sys.argv[2]))\n"
            # South over 1D 3C, two candidates: BEN's search (200 samples each) decides.
            "request = {'hand': 'A9862.K53.AK8.J5', 'dealer': 3, 'vulnerability': [False, False],"
            " 'auction': ['PASS', '1D', '3C']}\n"
            "calls = []\n"
            "for search in (False, True, True):\n"
            "    before = len(solved)\n"
            "    calls.append((bidders.bid(request | {'search': search}), len(solved) - before))\n"
            "sys.__stdout__.write(json.dumps(calls))\n")
    (nosearch_call, nosearch_solves), searched, again = json.loads(run_in_ben_venv(ben_python, code).splitlines()[-1])
    assert nosearch_solves == 0 and searched[1] > 0
    assert {nosearch_call, searched[0]} <= set(ben.BEN_CALLS)
    assert again == searched  # the search is deterministic too: same call, same samples solved


def test_hands_reach_ben_as_the_player_to_acts(server, boards, monkeypatch):
    """Each request carries the hand of (dealer + calls so far) % 4 and the dealer of the board."""
    sent, bid = [], server.bid
    monkeypatch.setattr(server, "bid", lambda request: sent.append(request) or bid(request))
    dealer = duplicate_dealer(2)
    play([ben.BenAgent("ben-nosearch", server)] * 4, boards.owners[1], dealer, duplicate_vulnerability(2),
            {"ben-nosearch": []})
    hands = hands_from_owner(boards.owners[1])
    assert len(sent) >= 4 and {request["dealer"] for request in sent} == {dealer}
    for request in sent:
        assert request["hand"] == hand_to_pbn(hands[(dealer + len(request["auction"])) % 4])


def test_the_licence_boundary():
    """Every file we wrote in contrib/ben_server is GPL-3.0 and holds no BEN file; the package
    never imports BEN, the server or its stubs (it only spawns the server)."""
    import ast

    written = [path for path in ben.SERVER_FOLDER.rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    assert {path.name for path in written} == {"ben_server.py", "requirements.txt", "__init__.py", "models.py"}
    for path in written:
        assert "# SPDX-License-Identifier: GPL-3.0-or-later" in path.read_text().splitlines()[:2], path
    bens = {"ben_server", "botbidder", "bidding", "nn", "sample", "ddsolver", "dds3", "tensorflow"}
    for folder in ("bridgeflow", "dataset", "pipelines", "training"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                assert not {name.split(".")[0] for name in names} & bens, (path, names)


def test_an_unreadable_reply_is_a_lost_server(server, monkeypatch):
    """A line that is not JSON (say, a library writing to stdout) restarts the server and replays."""
    restarts, send = server.restarts, server._send
    garbled = []

    def send_then_garble(request):
        send(request)
        if not garbled:
            garbled.append(server.process.pid)
            server._buffer = b"DDS says hello\n"
    monkeypatch.setattr(server, "_send", send_then_garble)
    reply = server.bid(ben.ben_request(parse_pbn_hand("AKT963.A6.AKT9.6"), [0, 0, 0], 1, 0, False))
    assert reply["call"] == "1S" and server.restarts == restarts + 1 and server.process.pid != garbled[0]


def test_the_virtualenv_is_rebuilt_only_when_its_requirements_change(tmp_path, monkeypatch):
    """A stale or missing marker rebuilds from scratch (the marker written last); a current one
    does nothing."""
    commands = []

    def run(command, what):
        commands.append(command[1:3])
        if command[1:3] == ["-m", "venv"]:
            (Path(command[3]) / "bin").mkdir(parents=True)
    monkeypatch.setattr(ben, "_run", run)
    folder = tmp_path / "venv"
    assert ben.ensure_venv(folder) == folder / "bin" / "python"
    assert commands == [["-m", "venv"], ["-m", "pip"]]
    assert (folder / ".requirements").read_text().strip() == ben.requirements_hash()
    ben.ensure_venv(folder)
    assert len(commands) == 2
    (folder / ".requirements").write_text("stale\n")
    (folder / "bin" / "leftover").write_text("")
    ben.ensure_venv(folder)
    assert len(commands) == 4 and not (folder / "bin" / "leftover").exists()
