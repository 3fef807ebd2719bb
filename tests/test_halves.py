"""A practice job's instances shared between two processes (judge/worker/child/halves.py): when
it splits, and that a shared run gives the same records, observations and verdict as one
process would, including when the learner's code misbehaves only in the fork."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judge.catalog import Catalog
from judge.pipeline import run_learner
from judge.subjects import REFERENCE
from judge.trusted import reference_for
from judge.worker.child import halves

from .conftest import exercise_worker


def _instance(name: str, world_size: int | None = None) -> dict:
    return {"name": name, "case": {"world_size": world_size} if world_size else {}}


COSTS = {"a": 0.01, "b": 0.06, "c": 0.02, "d": 0.03, "e": 0.04}
FIVE = [_instance(name) for name in "abcde"]


@pytest.fixture()
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(halves, "_cores", lambda: 2)


def test_plan_gives_the_longest_first_to_the_lighter_group(two_cores: None) -> None:
    planned = halves.plan({"guard": True, "costs": COSTS}, FIVE)
    assert planned is not None
    mine, theirs = planned
    # b (0.06) -> first, e (0.04) -> second, d -> second (0.07), c -> first (0.08), a -> second (0.08)
    assert [i["name"] for i in mine] == ["b", "c"]
    assert [i["name"] for i in theirs] == ["a", "d", "e"]  # each group in run order


@pytest.mark.parametrize("change, why", [
    ({"marked": True}, "a marked run's integrity record is one process's"),
    ({"guard": False}, "a trusted job (reference, pitfalls) is not a practice job"),
    ({"witness": {"case": "a", "counter": "writes"}}, "grind counts the whole run's writes"),
    ({"costs": None}, "no costs known"),
    ({"costs": {**COSTS, "e": "0.04"}}, "a cost that is not a number"),
    ({"costs": {k: v for k, v in COSTS.items() if k != "e"}}, "an instance without a cost"),
    ({"costs": {k: v / 10 for k, v in COSTS.items()}}, "too little work to be worth a fork"),
    ({"costs": {**COSTS, "b": 1.0}}, "one instance is nearly all of it"),
])
def test_plan_declines(two_cores: None, change: dict, why: str) -> None:
    job = {"guard": True, "costs": COSTS, **change}
    assert halves.plan(job, FIVE) is None, why


def test_plan_declines_distributed_cases_and_one_core(monkeypatch: pytest.MonkeyPatch, two_cores: None) -> None:
    job = {"guard": True, "costs": {**COSTS, "f": 0.05}}
    assert halves.plan(job, [*FIVE, _instance("f", world_size=2)]) is None
    assert halves.plan(job, [*FIVE, _instance("f")]) is not None
    monkeypatch.setattr(halves, "_cores", lambda: 1)
    assert halves.plan(job, [*FIVE, _instance("f")]) is None


def test_a_malformed_report_is_dropped_whole() -> None:
    class Run:
        observed: dict = {}
        guards = None

    class Record:
        cases: dict = {}
        case_s: dict = {}

    for raw in (b"", b"\x00" * 5, halves._HEADER.pack(2, 0) + b"{}", halves._HEADER.pack(1, 0) + b"{"):
        halves._merge(Run(), Record(), raw, {"a"})
        assert Run.observed == {} and Record.cases == {}


STATEFUL_FILE = """
import collections, functools, typing
import numpy as np
import torch
from torch.optim import Optimizer

Number = typing.Optional[float]
TABLE = (1, 2.5, "x")
counts = collections.Counter()
total = 0
buffer = torch.zeros(3)
array = np.zeros(3)

class Scaler:
    shared = []
    def __init__(self, cache={}):
        self.cache = cache

def remember(x, seen=[]):
    seen.append(x)

def bump():
    global total
    total += 1
"""


def _module(source: str):  # type: ignore[no-untyped-def]
    import types

    module = types.ModuleType("grind_subject_test")
    exec(compile(source, "learner.py", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("change", [
    "bump()", "remember(1)", "Scaler.shared.append(1)", "Scaler().cache['k'] = 1", "counts['a'] += 1",
    "buffer.add_(1)", "array[0] = 1", "Scaler.limit = 3", "Optimizer.learner_steps = 1",
    "remember.__defaults__ = ([],)",
    # a third review's hiding places, each a wrong answer that passed split and failed in order
    "globals()['__hidden__'] = 1", "globals()[7] = 1", "__import__('builtins').grind_steps = [1]",
    "__import__('sys').modules['grind_counter'] = [1]", "Optimizer.grind_list = []",
    "TABLE_ADD = [].append; TABLE_ADD(1)", "buffer.grad = __import__('torch').ones(3)",
    "buffer.data.add_(1)", "total = -0.0", "Scaler.__doc__ = 'x'", "remember.__doc__ = 'x'",
    "remember.__annotations__['x'] = int", "globals()['nested'] = [[[[[[[[0]]]]]]]]",
])
def test_what_a_learner_file_keeps_between_cases_is_seen(change: str) -> None:
    module = _module(STATEFUL_FILE)
    before = halves.state_of(module)
    assert before is not None and before == halves.state_of(module)  # nothing moved: the same
    exec(change, module.__dict__)
    assert halves.state_of(module) != before, change
    for name in ("learner_steps",):
        import torch.optim

        if hasattr(torch.optim.Optimizer, name):
            delattr(torch.optim.Optimizer, name)


def test_a_list_kept_in_builtins_or_on_a_library_class_is_seen_when_it_grows() -> None:
    """The same place, mutated rather than rebound: the library value is read a few levels deep."""
    import builtins

    import torch.optim

    module = _module(STATEFUL_FILE)
    builtins.grind_state_test = []  # type: ignore[attr-defined]
    torch.optim.Optimizer.grind_state_test = []  # type: ignore[attr-defined]
    try:
        before = halves.state_of(module)
        builtins.grind_state_test.append(1)  # type: ignore[attr-defined]
        assert halves.state_of(module) != before
        before = halves.state_of(module)
        torch.optim.Optimizer.grind_state_test.append(1)  # type: ignore[attr-defined]
        assert halves.state_of(module) != before
    finally:
        del builtins.grind_state_test  # type: ignore[attr-defined]
        del torch.optim.Optimizer.grind_state_test  # type: ignore[attr-defined]


def test_fingerprinting_runs_none_of_the_learners_code() -> None:
    """isinstance() reads an object's __class__, which a property can answer: a review ran its
    own code (and started a thread pool) from inside the fingerprint, before the fork."""
    module = _module("""
ran = []
class Sly:
    @property
    def __class__(self):
        ran.append(1)
        return type
    @property
    def __dict__(self):
        ran.append(1)
        return {}
THING = Sly()
""")
    halves.state_of(module)
    assert module.ran == []


def test_a_file_holding_state_that_cannot_be_read_is_not_split() -> None:
    assert halves.state_of(_module("import functools\n@functools.lru_cache\ndef f(x):\n    return x\n")) is None
    assert halves.state_of(_module("import torch\nGEN = torch.Generator()\n")) is None
    assert halves.state_of(_module("import itertools\nSTEPS = itertools.count()\n")) is None
    assert halves.state_of(None) is None


# --- the real thing: loss-scaling's cases in two processes of a warm worker -------------------

SLUG = "loss-scaling"
CORPUS = Path(__file__).parent / "corpus" / SLUG
# Each of these prints its process id when a scaler is made (every case makes one), and the
# variants misbehave only in a process other than the one that loaded the file: the fork.
PIDS = "\nimport os as _os\n_FIRST = _os.getpid()\n_init = LossScaler.__init__\n" \
       "def _watched(self, *a, **k):\n    print('pid', _os.getpid(), flush=True)\n{extra}    _init(self, *a, **k)\n" \
       "LossScaler.__init__ = _watched\n"
EXIT_IN_FORK = "    if _os.getpid() != _FIRST:\n        _os._exit(0)\n"
FORBIDDEN_IN_FORK = "    if _os.getpid() != _FIRST:\n        import torch\n        torch.amp.GradScaler('cpu')\n"


def _costs() -> dict[str, float]:
    return reference_for(Catalog().get(SLUG)).subjects[REFERENCE].record.case_s


def _run(source: str, costs: dict[str, float] | None, name: str = "learner.py"):  # type: ignore[no-untyped-def]
    exercise = Catalog().get(SLUG)
    return run_learner(exercise, source, name, worker=exercise_worker(SLUG), costs=costs)


def _pids(outcome) -> set[str]:  # type: ignore[no-untyped-def]
    return {line.split()[1] for line in outcome.stdout.splitlines() if line.startswith("pid ")}


@pytest.fixture(scope="module")
def costs() -> dict[str, float]:
    found = _costs()
    planned = halves.plan({"guard": True, "costs": found},
                          [{"name": name, "case": {}} for name in found])
    if planned is None or halves._cores() < 2:
        pytest.fail("loss-scaling's reference costs no longer split on this machine: these tests prove nothing")
    return found


@pytest.mark.parametrize("name", ["reference", "skipped_step_counted.py", "grow_without_reset.py",
                                  "correct_tensor_state_chain.py"])
def test_shared_run_gives_the_same_records_and_observations(costs: dict[str, float], name: str) -> None:
    exercise = Catalog().get(SLUG)
    source = (exercise.reference_path if name == "reference" else CORPUS / name).read_text()
    shared, alone = _run(source + PIDS.format(extra=""), costs), _run(source + PIDS.format(extra=""), None)
    assert shared.status == alone.status == "ok"
    assert len(_pids(shared)) == 2 and len(_pids(alone)) == 1  # it really ran in two processes
    assert shared.result is not None and alone.result is not None
    one, other = shared.result.subjects["learner"], alone.result.subjects["learner"]
    assert list(one.cases) == list(other.cases)  # in run order
    assert {k: v.to_json() for k, v in one.cases.items()} == {k: v.to_json() for k, v in other.cases.items()}
    assert set(one.case_s) == set(other.case_s) == set(one.cases)
    assert sorted(shared.observations) == sorted(alone.observations)
    for key, value in alone.observations.items():
        assert np.array_equal(shared.observations[key], value, equal_nan=True), key


def _one_job(source: str, costs: dict[str, float] | None):  # type: ignore[no-untyped-def]
    """The job run_learner would send, run once (no second run in one process after it)."""
    from judge.trusted import job_for
    from judge.worker.sandbox import Limits

    exercise = Catalog().get(SLUG)
    job = job_for(exercise, [{"id": "learner", "kind": "file", "path": "learner.py", "source": source}],
                  guard=True, forbidden=list(exercise.forbidden))
    if costs is not None:
        job["costs"] = dict(costs)
    return exercise_worker(SLUG).run_job(job, Limits(wall_s=exercise.time_limit, memory_mb=exercise.memory_mb))


def test_a_fork_that_dies_leaves_its_part_to_this_process(costs: dict[str, float]) -> None:
    source = Catalog().get(SLUG).reference_path.read_text() + PIDS.format(extra=EXIT_IN_FORK)
    outcome = _one_job(source, costs)
    assert outcome.status == "ok" and outcome.result is not None
    record = outcome.result.subjects["learner"]
    assert all(case.status == "ok" for case in record.cases.values())
    assert len(record.cases) == len(costs)
    assert len(_pids(outcome)) == 2  # the fork started a case, then the learner's code ended it
    assert record.carried_state  # no word from the fork: grind runs it again in one process
    again = _run(source, costs)
    assert again.status == "ok" and len(_pids(again)) == 1


STATE_ACROSS_CASES = """
_updates = [0]
_update = LossScaler.update
def _counted(self):
    _updates[0] += 1
    if _updates[0] > 2200:  # growth stops after 2,200 updates in one process: wrong only in order
        self._growth_factor = 1.0
    _update(self)
LossScaler.update = _counted
"""


def test_code_that_keeps_state_across_cases_gets_the_verdict_of_one_process(costs: dict[str, float],
                                                                             tmp_path: Path) -> None:
    """A review's answer: wrong when every case runs in order in one process (the long run's
    growth comes after 2,200 updates), right in each half of a split. The split sees the module's
    state move and the verdict is one process's."""
    source = Catalog().get(SLUG).reference_path.read_text() + STATE_ACROSS_CASES
    alone, shared = _one_job(source, None), _one_job(source, costs)
    assert shared.result is not None and shared.result.subjects["learner"].carried_state
    assert alone.result is not None and not alone.result.subjects["learner"].carried_state
    statuses = {name: case.status for name, case in alone.result.subjects["learner"].cases.items()}
    exercise = Catalog().get(SLUG)
    from judge.grade import grade

    path = tmp_path / "loss_scaling.py"
    path.write_text(source)
    verdict = grade(exercise, path, worker=exercise_worker(SLUG))  # the reference is loaded: it splits
    assert verdict.status.value == "failed", (verdict.status, verdict.message, statuses)


def test_a_correct_answer_with_its_own_threads_is_not_split(costs: dict[str, float]) -> None:
    """A pool the learner's file started at import does not exist in a fork: a review's correct
    answer that used one hung there. Such a job runs in one process."""
    source = Catalog().get(SLUG).reference_path.read_text() + THREAD_POOL
    outcome = _one_job(source, costs)
    assert outcome.status == "ok", (outcome.status, outcome.message)
    assert len(_pids(outcome)) == 1


THREAD_POOL = PIDS.format(extra="") + """
from concurrent.futures import ThreadPoolExecutor as _Pool
_POOL = _Pool(2)
_POOL.submit(int).result()  # its threads exist from here
_scale = LossScaler.scale
LossScaler.scale = lambda self, loss: _POOL.submit(_scale, self, loss).result()
"""


def test_a_forbidden_call_in_the_fork_is_reported(costs: dict[str, float]) -> None:
    source = Catalog().get(SLUG).reference_path.read_text() + PIDS.format(extra=FORBIDDEN_IN_FORK)
    outcome = _run(source, costs)
    assert outcome.result is not None
    assert any("GradScaler" in hit.api for hit in outcome.result.subjects["learner"].forbidden)
    assert not _run(Catalog().get(SLUG).reference_path.read_text() + PIDS.format(extra=""), costs) \
        .result.subjects["learner"].forbidden  # type: ignore[union-attr]


def test_only_a_practice_job_is_shared(costs: dict[str, float]) -> None:
    exercise = Catalog().get(SLUG)
    source = exercise.reference_path.read_text() + PIDS.format(extra="")
    marked = run_learner(exercise, source, "learner.py", worker=exercise_worker(SLUG), costs=costs, marked=True)
    assert marked.status == "ok" and len(_pids(marked)) == 1


HANG_AFTER_160_STEPS = """
_update = LossScaler.update
def _slow(self):
    self._hang_count = getattr(self, "_hang_count", 0) + 1
    if self._hang_count > 160:  # only the 2,100-step run's scaler gets here (the longest random one: 150)
        while True:
            pass
    _update(self)
LossScaler.update = _slow
"""


def test_a_timeout_names_the_case_still_running_not_the_one_that_finished(costs: dict[str, float]) -> None:
    """The long run (the costliest instance, this process's) hangs while the fork finishes the
    rest: the last "case" line grind reads must name the long run, not the fork's last case."""
    from judge.worker.sandbox import Limits

    exercise = Catalog().get(SLUG)
    source = exercise.reference_path.read_text() + HANG_AFTER_160_STEPS
    outcome = run_learner(exercise, source, "learner.py", Limits(wall_s=4.0, memory_mb=exercise.memory_mb),
                          worker=exercise_worker(SLUG), costs=costs)
    assert outcome.status == "timeout", (outcome.status, outcome.message)
    assert (outcome.last_case or "").endswith("defaults_long_run"), outcome.last_case


def test_a_forged_report_with_a_number_past_float_is_dropped_not_a_crash() -> None:
    """A review's learner code wrote the fork's report itself, with a case's seconds 10**400:
    float() raised OverflowError outside the merge's guard and crashed the job. The same number in a
    forged result document raised it in grind's own process."""
    import json as _json

    from judge.worker import protocol

    class Run:
        observed: dict = {}
        guards = None

    class Record:
        cases: dict = {}
        case_s: dict = {}

    head = _json.dumps({"cases": {"a": {"status": "ok", "keys": []}}, "case_s": {"a": 10 ** 400}, "hits": [],
                        "carried_state": False}).encode()
    from safetensors.numpy import save

    body = save({})
    raw = halves._HEADER.pack(len(head), len(body)) + head + body
    assert halves._merge(Run(), Record(), raw, {"a"}) is True  # dropped: its part runs in one process
    assert Record.cases == {}
    document = ('{"token": "t", "observations_sha256": "x", "subjects": {"learner": {"cases": {}, "elapsed_s": 1'
                + "0" * 400 + "}}}").encode()
    with pytest.raises(protocol.ProtocolError, match="is not a duration"):
        protocol.parse_result(document)


HANG_IN_FORK = "    if _os.getpid() != _FIRST:\n        while True:\n            pass\n"


def test_a_hang_in_the_fork_still_shows_the_learners_line(costs: dict[str, float]) -> None:
    """The timeout's stack dump came from the parent alone, waiting on the fork's pipe, so a hang
    in one of the fork's cases lost "last seen at line N"; the fork dumps its own stacks now."""
    from judge.worker.sandbox import Limits

    exercise = Catalog().get(SLUG)
    source = exercise.reference_path.read_text() + PIDS.format(extra=HANG_IN_FORK)
    outcome = run_learner(exercise, source, "learner.py", Limits(wall_s=4.0, memory_mb=exercise.memory_mb),
                          worker=exercise_worker(SLUG), costs=costs)
    assert outcome.status == "timeout", (outcome.status, outcome.message)
    assert 'File "learner.py"' in outcome.timeout_trace, outcome.timeout_trace[-2000:]


HANG_EVERYWHERE = """
_update = LossScaler.update
def _stuck(self):
    if self._clean_steps > 3:
        while True:
            pass
    _update(self)
LossScaler.update = _stuck
"""


def test_a_timeout_names_the_case_one_process_would_have_stopped_at(costs: dict[str, float]) -> None:
    """A review's ordinary infinite-loop bug hangs in both processes: the message named the
    fork's case, which one process running every case in order never reaches. It names the
    earliest case running now."""
    from judge.worker.sandbox import Limits

    exercise = Catalog().get(SLUG)
    source = exercise.reference_path.read_text() + HANG_EVERYWHERE
    limits = Limits(wall_s=4.0, memory_mb=exercise.memory_mb)
    shared = run_learner(exercise, source, "learner.py", limits, worker=exercise_worker(SLUG), costs=costs)
    alone = run_learner(exercise, source, "learner.py", limits, worker=exercise_worker(SLUG))
    assert shared.status == alone.status == "timeout"
    assert shared.last_case == alone.last_case, (shared.last_case, alone.last_case)


FORBIDDEN_TWO_WAYS = """
import torch as _torch
_init = LossScaler.__init__
def _peeking(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    try:  # torch's own scaler, a different forbidden name by the interval (the long run: 2000)
        if self._growth_interval == 2000:
            getattr(_torch, "_amp_upd" + "ate_scale_")(None)
        else:
            getattr(_torch.amp, "Grad" + "Scaler")("cpu")
    except Exception:
        pass
LossScaler.__init__ = _peeking
"""


def test_the_forbidden_call_named_is_the_one_met_first_in_order(costs: dict[str, float]) -> None:
    """The fork's forbidden calls were added after this process's, so another one came first in
    the message than in one process. They are ordered by the instance they came in."""
    source = Catalog().get(SLUG).reference_path.read_text() + FORBIDDEN_TWO_WAYS
    shared, alone = _one_job(source, costs), _one_job(source, None)
    assert shared.result is not None and alone.result is not None
    first = [h.api for h in alone.result.subjects["learner"].forbidden]
    assert len(set(first)) >= 2, first  # both names were met: which comes first is the question
    assert [h.api for h in shared.result.subjects["learner"].forbidden] == first


def test_a_library_object_left_in_sys_modules_does_not_stop_the_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole suite's process held a library's C object in sys.modules (not a module), and the
    strict walk gave up on every file: no split anywhere. Libraries' places are read leniently."""
    import sys

    monkeypatch.setitem(sys.modules, "grind_library_iterator", iter([1, 2]))
    module = _module(STATEFUL_FILE)
    before = halves.state_of(module)
    assert before is not None
    exec("bump()", module.__dict__)
    assert halves.state_of(module) != before
