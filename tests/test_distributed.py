"""Distributed cases (judge/worker/child/ranks.py): a case with ``world_size`` runs on real gloo ranks.

What is proven here, cheaply: the kit refuses a bad ``world_size``; the deadlock and dead-rank
texts say where every rank was; the reference of ``ddp-token-loss`` gives, on every rank, the
gradient one process computes over the whole batch (DDP's promise, the truth the exercise rests
on); and the hostile ranks of ``tests/adversarial/distributed/`` (a rank that never joins, a rank
that kills its peers) get their verdicts, leave no process behind and never raise in the judge.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.catalog import Catalog
from judge.grade import grade
from judge.trusted import reference_for
from judge.worker.child import ranks
from judge.worker import runner as child
from judge.worker.sandbox import Limits, isolation

from .conftest import ROOT

HOSTILE = sorted((ROOT / "tests" / "adversarial" / "distributed").glob("*.py"))
WORKER = str(Path(child.__file__).resolve())


@pytest.mark.parametrize("bad", [1, 0, 9, 2.0, "2", True])
def test_case_refuses_a_world_size_that_is_not_2_to_8(kit: Any, bad: Any) -> None:
    with pytest.raises(kit.CaseError, match="world_size"):
        kit.case("c", inputs=dict, call=lambda subject: {}, world_size=bad)
    assert kit.case("c", inputs=dict, call=lambda subject: {}, world_size=4)["world_size"] == 4


def _state(phase: str, since: float = 0.0, op: str = "", status: str = "ok") -> dict[str, Any]:
    record = {"status": status, "error": {"type": "ValueError"}} if status == "error" else {"status": status}
    return {"phase": phase, "since": since, "op": op, "record": record}


def test_deadlock_says_which_rank_waited_where_and_what_the_others_did() -> None:
    states = {0: _state("done"), 1: _state("in", op="all_reduce")}
    assert ranks._deadlock(states, ranks.GRACE_S - 0.1) is None  # a peer may still be finishing its side
    assert ranks._deadlock(states, ranks.GRACE_S) == "rank 1 waited in all_reduce while rank 0 returned"
    four = {0: _state("done", status="error"), 1: _state("in", op="barrier"), 2: _state("in", op="barrier"),
            3: _state("done")}
    assert ranks._deadlock(four, 10.0) == "ranks 1, 2 waited in barrier while rank 0 raised ValueError and rank 3 returned"
    crossed = {0: _state("in", op="all_reduce"), 1: _state("in", op="broadcast")}
    assert ranks._deadlock(crossed, 10.0) == "rank 0 waited in all_reduce while rank 1 waited in broadcast"
    # Every rank in the same collective is progress as far as anyone can tell: gloo's timeout decides.
    same = {0: _state("in", op="all_reduce"), 1: _state("in", op="all_reduce")}
    assert ranks._deadlock(same, 10.0) is None
    running = {0: _state("in", op="all_reduce"), 1: _state("running")}
    assert ranks._deadlock(running, 10.0) is None
    assert ranks._group_text({0: _state("running"), 1: _state("running")}, [0, 1]) == "ranks 0, 1 were still running"


def test_a_dead_rank_is_named_with_its_signal() -> None:
    assert ranks._status_text(9) == "was killed by signal 9 (SIGKILL)"
    assert ranks._status_text(3 << 8) == "exited with code 3 before returning"


def _full_batch_grads(checks: Any, inputs: dict[str, Any], world: int) -> np.ndarray:
    """The gradient of the mean over every valid token of every rank, in one process."""
    import torch

    torch.manual_seed(inputs["seed"])
    model = torch.nn.Linear(2, 3, dtype=torch.float64)
    losses, masks = [], []
    for rank in range(world):
        x, y, mask = checks.batch(inputs["seed"], rank, inputs["lengths"], inputs["width"], 3, 2)
        losses.append(torch.nn.functional.cross_entropy(model(x).reshape(-1, 3), y.reshape(-1), reduction="none"))
        masks.append(mask.reshape(-1))
    loss, keep = torch.cat(losses), torch.cat(masks)
    loss[keep].mean().backward()
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()]).numpy()


def test_ddp_token_loss_reference_gives_the_single_process_gradient_on_every_rank(kit: Any) -> None:
    exercise = Catalog().get("ddp-token-loss")
    source = (exercise.solution_dir / "checks.py").read_text()
    namespace = {"__name__": "grind_checks", "__file__": str(exercise.solution_dir / "checks.py")}
    exec(compile(source, namespace["__file__"], "exec"), namespace)
    checks = type(sys)("grind_checks")
    checks.__dict__.update(namespace)
    reference = reference_for(exercise).subjects["reference"]  # the cached run grading compares with
    compared = 0
    for case in checks.CASES:
        if case["call"] is not checks.run_model:
            continue
        truth = _full_batch_grads(checks, case["inputs"](), case["world_size"])
        for rank in range(case["world_size"]):
            np.testing.assert_allclose(reference.obs[case["name"]][f"rank {rank}: grads"], truth, rtol=1e-10)
            compared += 1
    assert compared >= 8


def _runners() -> set[int]:
    """Live processes below this one running this checkout's worker (a run's child, its ranks, a
    warm server). Below this one only: other xdist workers run children of their own meanwhile,
    and grind makes this process a child subreaper, so a process escaping its run is reparented
    here and still counted."""
    from .adversarial_harness import descendants

    found = set()
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if WORKER.encode() in handle.read():
                    found.add(pid)
        except OSError:
            continue
    return found


@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_rank_gets_its_verdict_and_leaves_nothing_running(path: Path) -> None:
    expected = set(re.match(r"#\s*expect:\s*([\w|]+)", path.read_text()).group(1).split("|"))
    if "kills" in path.stem and isolation().level not in ("bubblewrap", "landlock"):
        pytest.skip(f"{path.name} signals every process it can see: only contained by a sandbox")
    exercise = Catalog().get("ddp-token-loss")
    reference_for(exercise)  # cached before the grade: its clock times only the submission
    before = _runners()
    verdict = grade(exercise, path, limits=Limits(wall_s=10.0))
    assert verdict.status.value in expected, verdict.message or verdict.first_failure
    if path.stem == "rank_never_joins":
        text = " ".join(c.message or "" for c in verdict.checks)
        assert "rank 1 exited with code 0 before returning while rank 0" in text, text
    assert not (_runners() - before), "a rank or a child outlived the run"


def test_tcp_is_let_through_landlock_only_inside_a_private_network_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    """gloo's ranks talk TCP on 127.0.0.1: allowed where the run's only interface is its own `lo`,
    bubblewrap's; without bubblewrap the child is told to make a namespace of its own first
    (private_net), and allows TCP only if it could."""
    from judge.worker import isolation as levels

    for bwrap, loopback, private in (("/usr/bin/bwrap", True, False), (None, False, True)):
        monkeypatch.setattr(levels, "isolation", lambda bwrap=bwrap: levels.Isolation(None, bwrap, 7))
        rules = levels.confinement([], "/tmp/grind-run-x")
        assert (rules["loopback_tcp"], rules["private_net"]) == (loopback, private)


def test_ranks_run_on_their_own_loopback_and_cannot_reach_the_hosts(tmp_path: Path) -> None:
    """At every sandboxed level (CI runs this as root with bubblewrap and, in laptop mode, as a
    user with Landlock alone), a distributed case runs on real gloo ranks, cold and warm, and the
    learner's code cannot connect to a TCP service listening on the host's 127.0.0.1: its
    loopback is the run's own (bubblewrap's network namespace, or one the child made itself)."""
    import socket
    import threading

    from judge.worker.isolation import isolation

    from .conftest import graded_cold_and_warm

    if isolation().level not in ("bubblewrap", "landlock"):
        pytest.skip(f"isolation level {isolation().level}: no private loopback to test")
    if isolation().level == "landlock":
        import ctypes

        probe = os.fork()
        if probe == 0:  # can this kernel give a user a network namespace at all?
            os._exit(0 if ctypes.CDLL(None, use_errno=True).unshare(0x10000000 | 0x40000000) == 0 else 1)
        if os.waitpid(probe, 0)[1] != 0:
            pytest.skip("this kernel refuses unprivileged user namespaces: distributed cases cannot run "
                        "at the Landlock level here (README, Security model)")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    reached: list[bool] = []
    threading.Thread(target=lambda: (listener.accept(), reached.append(True)), daemon=True).start()
    exercise = Catalog().get("ddp-token-loss")
    source = (ROOT / "tests" / "submissions" / "ddp-token-loss" / "alt_global_mean_value.py").read_text()
    probe_code = (f"\nimport socket as _s\ntry:\n    _s.create_connection(('127.0.0.1', {port}), timeout=1).close()\n"
                  "    raise SystemExit('reached the host')\nexcept OSError:\n    pass\n")
    learner = tmp_path / "ddp_token_loss.py"
    learner.write_text(source + probe_code)
    try:
        cold, warm = graded_cold_and_warm(exercise, learner)
    finally:
        listener.close()
    assert cold.status.value == "passed", (cold.message, [c.message for c in cold.checks if c.message][:2])
    assert warm.status.value == "passed", (warm.message, [c.message for c in warm.checks if c.message][:2])
    assert not reached, "the learner's code reached a service on the host's loopback"


def test_a_rank_that_skips_the_all_reduce_is_reported_as_a_deadlock_naming_both_ranks() -> None:
    """Rank 0's shard is small, so it returns early; rank 1 waits in the all_reduce alone."""
    exercise = Catalog().get("sharded-clip")
    path = ROOT / "tests" / "submissions" / "sharded-clip" / "pitfall_early_return_deadlocks.py"
    before = _runners()
    # 20 s, the exercise's time_limit: this answer deadlocks in five cases (small shard, and the four
    # with an empty shard), each held GRACE_S = 1.5 s before it is declared; about 8 s in all.
    verdict = grade(exercise, path, limits=Limits(wall_s=20.0))
    check = next(c for c in verdict.checks if c.name == "small_shard_still_clipped")
    assert check.message == "deadlock: rank 1 waited in all_reduce while rank 0 returned", check.message
    assert not (_runners() - before)


def test_a_rank_short_of_cpu_is_not_called_deadlocked() -> None:
    """Only a sleeping rank counts as waiting: a runnable one is merely slow on a loaded machine."""
    import subprocess

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.3)
        assert not ranks._runnable(sleeper.pid)
        assert ranks._runnable(os.getpid())  # this thread is running while it reads its own state
        states = {0: _state("done"), 1: {**_state("in", op="all_reduce"), "pid": os.getpid()}}
        assert ranks._deadlock(states, 10.0) is None
        states[1]["pid"] = sleeper.pid
        assert ranks._deadlock(states, 10.0) == "rank 1 waited in all_reduce while rank 0 returned"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_gloo_is_told_the_loopback_interface_so_it_never_resolves_the_hostname(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks talk over loopback only. Unless gloo is named that interface it resolves the
    machine's hostname, and where that fails (containers) every rank printed "Unable to resolve
    hostname" to stderr, shown as the learner's own output on every run. An interface already
    chosen by the user is kept."""
    monkeypatch.delenv("GLOO_SOCKET_IFNAME", raising=False)
    ranks._loopback_only()
    chosen = os.environ.get("GLOO_SOCKET_IFNAME")
    assert chosen is not None and chosen.startswith("lo")
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "eth7")
    ranks._loopback_only()
    assert os.environ["GLOO_SOCKET_IFNAME"] == "eth7"


def test_a_correct_distributed_answer_shows_no_gloo_warning_as_the_learners_stderr() -> None:
    """What the walkthrough saw: 8 lines of gloo's hostname warning under a passing verdict."""
    exercise = Catalog().get("ddp-token-loss")
    verdict = grade(exercise, ROOT / "tests" / "corpus" / "ddp-token-loss" / "correct_hf_average_tokens.py")
    assert verdict.passed, verdict.message
    assert "ProcessGroupGloo" not in verdict.stderr and "resolve hostname" not in verdict.stderr


def _line(key: bytes, sequence: int, pid: int, text: str, signature: str | None = None) -> bytes:
    """A report line as a rank's tracer writes it (ranks._say), or with another signature."""
    mark = signature if signature is not None else ranks._signature(key, sequence, pid, text)
    return f"{sequence} {pid} {mark} {text}".encode()


def test_a_report_line_counts_only_when_the_rank_signed_it() -> None:
    """The learner's code shares the rank's process and can write to its report pipe: a line
    it made (no key, an old number replayed, another process's id) is dropped, and from then on
    that rank's word on where it waits no longer counts; its own next lines still arrive."""
    key, pid = b"k" * 32, 4242
    state = {"key": key, "pid": pid, "sequence": 0, "trusted": True}
    assert ranks._signed(_line(key, 1, pid, '{"in": "barrier"}'), state) == {"in": "barrier"}
    assert state["sequence"] == 1 and state["trusted"]
    forged = [_line(key, 2, pid, '{"in": "barrier"}', signature="0" * 64),  # not signed with the key
              _line(b"x" * 32, 2, pid, '{"in": "barrier"}'),  # signed with another key
              _line(key, 1, pid, '{"in": "barrier"}'),  # the first line again
              _line(key, 2, pid + 1, '{"in": "barrier"}'),  # a fork of the rank: its own process id
              b'{"in": "barrier"}', b"2 4242 abc"]
    for raw in forged:
        assert ranks._signed(raw, state) is None, raw
    assert not state["trusted"] and state["sequence"] == 1
    assert ranks._signed(_line(key, 2, pid, '{"done": {}}'), state) == {"done": {}}  # its record still arrives


def test_a_held_save_is_let_go_only_once_its_peers_have_settled() -> None:
    """The watcher's rule (ranks._Watch._peers_settled): every other rank returned, waits its own
    turn to save (a lower rank), or sleeps in a collective the holder has not entered yet (or in
    a point-to-point receive), on a signed word, with no collective of its ended in an error;
    anything else keeps the save held."""
    import subprocess

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.3)

        def settled(peer: dict[str, Any], holder_count: int = 0, holder: int = 0) -> bool:
            states = {holder: {"phase": "running", "count": holder_count, "holding": True}, 1 - holder: peer}
            return ranks._Watch(None, states, None, None)._peers_settled(holder)  # type: ignore[arg-type]

        waiting = {"phase": "in", "op": "barrier", "count": 1, "trusted": True, "pid": sleeper.pid}
        assert settled(waiting)
        assert not settled({**waiting, "trusted": False})  # it once wrote a line of its own
        assert not settled({**waiting, "pid": os.getpid()})  # said so, but is running
        assert not settled(waiting, holder_count=1)  # that collective has completed: the holder joined it
        assert not settled({**waiting, "raised": "barrier ended in RuntimeError: timed out"})
        assert settled({**waiting, "op": "recv", "count": 0}, holder_count=3)  # a receive is not counted
        assert settled({**waiting, "op": "recv", "count": 0, "src": 0})  # ... from the holder
        assert not settled({**waiting, "op": "recv", "count": 0, "src": 1})  # from another peer: a ring on a timer
        assert settled({**waiting, "op": ranks.BACKWARD, "count": 0}, holder_count=1)  # DDP's gradients
        assert settled({"phase": "done"})
        assert not settled({"phase": "running", "pid": sleeper.pid})  # asleep, but not in a collective
        assert settled({"phase": "running", "holding": True}, holder=1)  # rank 0 waits its turn: rank 1 saves first
        assert not settled({"phase": "running", "holding": True}, holder=0)  # rank 1 saves before rank 0 may
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_collective_that_failed_and_was_caught_fails_the_case() -> None:
    """A rank whose barrier timed out (a group no one else met, a wait with a timeout) did not
    wait for its peers, whatever its code did with the exception: the case fails, naming it."""
    states = {0: _state("done"), 1: {**_state("done"), "raised": "barrier ended in RuntimeError: timed out"}}
    outcome = ranks._settled(states, {}, 0.0)
    assert outcome is not None and outcome["failure"]["type"] == "CollectiveFailed"
    assert outcome["failure"]["message"].startswith("rank 1's barrier ended in RuntimeError: timed out")
    del states[1]["raised"]
    assert ranks._settled(states, {}, 0.0) == {"ranks": [{"status": "ok"}, {"status": "ok"}]}


def test_a_wait_on_another_thread_is_not_the_ranks() -> None:
    """A thread other than the rank's main one that waits in a collective does not make the rank
    a waiting one (its main thread may sleep, then return), and a receive says its source."""
    key, pid = b"k" * 32, 77
    state = {"key": key, "pid": pid, "sequence": 0, "trusted": True, "phase": "running", "count": 0}
    buffers: dict[int, bytes] = {}
    read, write = os.pipe()
    try:
        lines = ['{"in": "barrier", "aside": 1}', '{"in": "recv", "src": 0}', '{"out": "recv"}']
        for number, text in enumerate(lines, 1):
            os.write(write, _line(key, number, pid, text) + b"\n")
        os.write(write, _line(key, 4, pid, '{"out": "barrier", "aside": 1, "raised": "RuntimeError: timed out"}') + b"\n")
        buffers[read] = b""
        ranks._read_reports(read, state, buffers, {read}, 1.0)
    finally:
        os.close(read)
        os.close(write)
    assert state["count"] == 1  # the thread's barrier is still one of the rank's collectives
    assert state["phase"] == "running" and state["src"] == 0  # but only the main thread's receive was a wait
    assert state["raised"].startswith("barrier ended in RuntimeError")  # and a thread's failure is the rank's
