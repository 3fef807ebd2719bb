"""One job, phase by phase: load the checks, list the subjects, start the guards (learner
runs), observe every case instance of every subject, time the first (speed runs), write the
result, and leave without running anything the submission may have registered.

numpy, torch and safetensors are imported in :func:`execute`, once the limits are in force.
"""

from __future__ import annotations

import faulthandler
import hashlib
import os
import sys
import time
import types
from typing import Any

from .. import guards as _guards
from .. import heap as _heap
from .. import integrity as _integrity
from .. import poison as _poison
from .. import protocol as _protocol
from .. import witness as _witness
from . import halves as _halves
from . import ranks as _ranks
from .checks import AuthoringError, authoring_error, check_cases, check_pitfalls, expand_cases, pitfall_combinations
from .checks import subject_namespace
from .rank_cases import close_rank_pools, observe_ranks
from .run import Run, error_info, reseed
from .sources import _read_staged, install_kit, load_source, seal_imports
from .values import ENCODE, BadOutput, bind_conversions, entries_of, preview, rank_entries, to_array

ForbiddenAPI = _guards.ForbiddenAPI
Guards = _guards.Guards


def load_checks(run: Run) -> None:
    """The cases, one instance per (case, size, seed). The checks module may warm up what its cases
    need (building a torch optimizer imports torch._dynamo, over a second): this runs before
    "ready", outside the learner's clock."""
    filename = run.job["checks_filename"]
    try:
        run.checks = load_source(run.job["checks_source"], filename, "grind_checks")
        cases = list(run.checks.CASES)
    except Exception as exc:  # noqa: BLE001 - the author's file: say where, in one line
        raise authoring_error(exc, filename, "loading the checks") from None
    check_cases(cases, filename)
    run.instances = expand_cases(cases, run.job.get("seeds"))
    if any(case.get("world_size") for case in cases):
        # Before "ready" and before any subject loads: the imports every rank would pay for, and
        # the collectives wrapped so each rank can say where it waits (see ranks.py).
        import torch._dynamo  # noqa: F401 - DDP's constructor imports it: about 3 s in every rank otherwise
        import torch.distributed  # noqa: F401
        import torch.nn.parallel  # noqa: F401

        _ranks.install_tracer(run.torch)


def list_subjects(run: Run) -> list[tuple[str, dict[str, Any]]]:
    """(subject id, spec) in run order. A pitfalls bundle is trusted code: it is loaded here and
    becomes one subject per pitfall, whose description (every field PitfallMeta has) goes into
    the result."""
    import dataclasses

    subjects: list[tuple[str, dict[str, Any]]] = []
    for spec in run.job["subjects"]:
        if spec["kind"] != "pitfalls":
            subjects.append((spec["id"], spec))
            continue
        try:
            bundle = load_source(spec["source"], spec["path"], "grind_pitfalls")
            check_pitfalls(list(bundle.PITFALLS), spec["path"])
        except AuthoringError:
            raise
        except Exception as exc:  # noqa: BLE001 - the author's file: say where, in one line
            raise authoring_error(exc, spec["path"], "loading the pitfalls") from None
        described = [f.name for f in dataclasses.fields(_protocol.PitfallMeta)]
        pairs = run.job.get("combinations")  # None: the single pitfalls; a list: only these pairs
        for pitfall in bundle.PITFALLS:
            run.result.pitfalls.append(_protocol.PitfallMeta(**{k: pitfall[k] for k in described if k in pitfall}))
            if pairs is None:
                subjects.append((_protocol.pitfall_subject(pitfall["slug"]),
                                 {"kind": "impl", "impl": pitfall["impl"], "path": spec["path"]}))
        if pairs is not None:
            subjects += pitfall_combinations(bundle, spec["path"], pairs)
    return subjects


def start_guards(run: Run) -> None:
    """Learner runs: the "from memory" guards, and a dump of every thread's stack just before the
    parent's deadline, so that a timeout can still point at the learner's line."""
    if not run.job.get("guard"):
        return
    run.guards = Guards(run.job["subjects"][0].get("path", ""))
    # the objects themselves, before the guards' stand-ins take their names
    targets = _poison.resolve(run.job.get("forbidden", []), _guards) if run.job.get("marked") else []
    run.guards.install(run.job.get("forbidden", []))
    if run.job.get("marked"):  # the implementations themselves, absent (judge/worker/poison.py)
        _poison.install(targets, run.checks, run.torch, _guards)
        _ranks.POISONED = (_poison.STATUS_BASE, _poison.STATUS_BASE + _poison.STATUS_COUNT)
    dump = open(os.path.join(run.job["out_dir"], "timeout_trace.txt"), "w")
    seconds = max(run.job["time_limit"] - 0.3, 0.1)
    faulthandler.dump_traceback_later(seconds, file=dump)
    # where a fork that runs half the cases arms its own dump (child/halves.py), and how many
    # threads this process has before the learner's file loads (its watchdog's included)
    run.timeout_dump = (dump, time.monotonic() + seconds)
    run.threads_before_learner = _halves.thread_count()


def load_subject(run: Run, spec: dict[str, Any], module_name: str) -> tuple[Any, Any]:
    """(the entry points as the case code will see them, None), or (None, why there are none).
    Whatever the learner's file raises propagates: the caller records it as a load error.

    A learner's file is loaded as a learner call (anything it does at import is watched), its
    entry points are checked by identity, and the case code gets them wrapped, so that the
    guards know when a call on the learner's behalf is in progress."""
    if spec["kind"] == "impl":
        return subject_namespace(spec["impl"], run.entry), None
    from contextlib import nullcontext

    guards = run.guards
    source = spec["source"] if "source" in spec else _read_staged(spec["source_file"])
    with guards.learner() if guards else nullcontext():
        module = load_source(source, spec.get("path", ""), module_name, guards)
        run.check_transition()  # marks: what the file's own top level changed
        if guards:
            guards.check_exports(module, run.entry, source)
            if guards.hits:
                raise ForbiddenAPI(guards.hits[0]["api"])
        missing = [name for name in run.entry if not hasattr(module, name)]
        if missing:
            return None, _protocol.ErrorInfo("MissingDefinition", f"the file does not define {', '.join(missing)}")
        subject = subject_namespace(module, run.entry)
        if guards:
            subject = types.SimpleNamespace(**{name: guards.entry_point(getattr(subject, name)) for name in run.entry})
    return subject, None


def observe_case(run: Run, subject_id: str, subject: Any, instance: dict[str, Any], filename: str,
                 record_input: bool) -> Any:
    """Run one case instance on one subject and keep what it observed, as plain arrays. Whatever
    the subject does (raise, return non-data) becomes the case's record."""
    np, torch = run.np, run.torch
    name, case = instance["name"], instance["case"]
    run.say(f"case {subject_id} {name}")
    reseed(torch)
    inputs = case["inputs"](**instance["params"]) if "inputs" in case else {}
    if record_input:
        run.result.instances.append(_protocol.Instance(
            name, case["name"], case.get("kind", "edge"), instance["params"], preview(inputs, np, torch),
            case.get("shown"), rank_entries(case, entries_of(case, inputs))))
    if case.get("world_size"):
        return observe_ranks(run, subject_id, subject, name, case, filename)
    try:
        raw = case["call"](subject, **inputs)
        if type(raw) is not dict:
            raise BadOutput("the case did not produce observations")
        for key, value in raw.items():
            try:
                run.observed[_protocol.obs_name(subject_id, name, key)] = to_array(value, np, torch)
            except BadOutput as exc:
                raise BadOutput(f"{key}: {exc}") from None
    except BadOutput as exc:
        return _protocol.CaseRecord("bad_output", message=str(exc))
    except BaseException as exc:  # noqa: BLE001 - a learner's exception is data
        return _protocol.CaseRecord("error", error=error_info(exc, filename))
    return _protocol.CaseRecord("ok", keys=[str(k) for k in raw])


def run_subject(run: Run, subject_id: str, spec: dict[str, Any], record_inputs: bool) -> Any:
    """Load one subject and run it over every instance; returns its entry points (None if it
    did not load). Its record is in the result from the start, so a crash leaves no doubt."""
    record = run.result.subjects[subject_id] = _protocol.SubjectRecord()
    started = time.perf_counter()
    filename = spec.get("path", "")
    try:
        module_name = f"grind_subject_{len(run.result.subjects)}"
        subject, record.load_error = load_subject(run, spec, module_name)
    except BaseException as exc:  # noqa: BLE001 - anything the learner's import does is data
        record.load_error = error_info(exc, filename)
        record.forbidden = run.hits()
        return None
    if record.load_error is not None:
        return None
    # A trusted subject (the reference, a pitfall) is measured here, by the judge's own code: no
    # learner code runs in a trusted job. A learner's figures come from the witness outside.
    witness = run.job.get("witness") if not run.job.get("guard") else None
    before = _witness.sample() if isinstance(witness, dict) else None
    def observe(instance: dict[str, Any]) -> Any:
        return observe_case(run, subject_id, subject, instance, filename, record_inputs)

    try:
        halves = _halves.plan(run.job, run.instances, _halves.thread_count() - run.threads_before_learner)
        if halves is not None:
            _halves.observe_halves(run, subject_id, record, *halves, observe=observe, flush=flush_output,
                                   module=sys.modules.get(module_name))
        for instance in run.instances:
            if instance["name"] not in record.cases:
                begun = time.perf_counter()
                record.cases[instance["name"]] = observe(instance)
                record.case_s[instance["name"]] = time.perf_counter() - begun
    finally:
        close_rank_pools(run, subject_id)  # its ranks reaped: their writes are folded into ours
    if before is not None:
        record_witnessed(run, subject_id, str(witness.get("case") if isinstance(witness, dict) else None),
                         _witness.since(before))
    run.check_integrity()  # marks: once per subject (every case would cost 0.03 s each, on the clock)
    record.forbidden = run.hits()
    record.elapsed_s = time.perf_counter() - started
    return subject


def record_witnessed(run: Run, subject_id: str, case_name: str, figures: dict[str, Any]) -> None:
    """A trusted subject's traffic and writes, kept as observations of the exercise's witnessed
    case (``WITNESSED`` keys): the parent turns them into "x the reference's" figures."""
    np = run.np
    record = run.result.subjects[subject_id]
    for instance in run.instances:
        case = record.cases.get(instance["name"])
        if instance["case"].get("name") != case_name or case is None or case.status != "ok":
            continue
        for counter, value in figures.items():
            if isinstance(value, int):
                key = _protocol.WITNESSED + counter
                run.observed[_protocol.obs_name(subject_id, instance["name"], key)] = np.array(value, dtype=np.int64)
                case.keys.append(key)


class _OverBudget(BaseException):
    pass


def time_call(case: dict[str, Any], subject: Any, budget: float | None,
              enough: float | None = None) -> float | None:
    """The fastest of several timed calls after one warm-up; None if a call runs past ``budget``
    seconds (stopped with SIGALRM, so a very slow submission cannot turn a pass into a timeout).

    The minimum, not the median: on a loaded machine a call is only ever slowed down, never sped
    up, so the fastest sample is the one closest to the code's own cost. A median of three let
    one preempted millisecond call turn a vectorised answer into "7x slower" advice. At least
    three samples and at most nine, stopping once the samples add up to a quarter second.

    ``enough``: the first call (the warm-up included) faster than this many seconds ends the
    timing and is the answer. The parent sends the time from which it would give advice (SLOWER
    times the reference's): one call under it proves the code can run that fast, so the fastest
    of nine would be under it too and the advice the same (none). On a passing ``grind run`` of
    a vectorised answer that is one call instead of ten, 20-30 ms of a 50 ms job."""
    import signal

    def over(signum: int, frame: Any) -> None:
        raise _OverBudget()

    samples: list[float] = []
    previous = signal.signal(signal.SIGALRM, over) if budget else None
    try:
        for attempt in range(10):
            if attempt > 3 and sum(samples) > 0.25:
                break
            inputs = case["inputs"]()
            if budget:
                signal.setitimer(signal.ITIMER_REAL, budget)
            started = time.perf_counter()
            try:
                case["call"](subject, **inputs)
            except _OverBudget:
                return None
            except BaseException:  # noqa: BLE001 - a failure here is not the verdict's business
                return None
            finally:
                if budget:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            took = time.perf_counter() - started
            if enough is not None and took < enough:
                return took
            if attempt:
                samples.append(took)
    finally:
        if budget:
            signal.signal(signal.SIGALRM, previous)
    return min(samples)


SPEED_BUDGET_S = 1.0  # a learner's timed call stopped here is "more than N x slower", never a timeout


def time_speed(run: Run, subject_id: str, subject: Any, speed_case: dict[str, Any]) -> None:
    """Speed runs: the first subject, if it passed every case to the end, timed on the SPEED
    case. In a trusted job that subject is the reference, timed once with the observations the
    cache keeps (so a learner's job never carries the reference, not even to time it); in a
    learner's job it is the learner, with a budget per call, so a very slow answer cannot turn a
    pass into a timeout. The parent puts the two times side by side (judge.speed)."""
    record = run.result.subjects[subject_id]
    if subject is None or record.load_error is not None or any(c.status != "ok" for c in record.cases.values()):
        return
    name = speed_case.get("name", "a larger input")
    if run.job.get("guard"):
        enough = run.job.get("speed_enough_s")
        run.result.speed = _protocol.SpeedSample(0.0, SPEED_BUDGET_S, time_call(
            speed_case, subject, SPEED_BUDGET_S, float(enough) if isinstance(enough, (int, float)) else None), name)
    else:
        seconds = time_call(speed_case, subject, None)
        if seconds is not None:
            run.result.speed = _protocol.SpeedSample(seconds, 0.0, None, name)


def write_result(run: Run, token: str, save_file: Any) -> None:
    """observations.safetensors, then result.json carrying the run's token and the observations'
    hash. O_EXCL: if the submission already created result.json, refuse to write a second one;
    the parent then sees a forged or doubled result and fails the run."""
    out_dir = run.job["out_dir"]
    obs_path = os.path.join(out_dir, "observations.safetensors")
    save_file(run.observed, obs_path)
    with open(obs_path, "rb") as handle:
        run.result.observations_sha256 = hashlib.sha256(handle.read()).hexdigest()
    run.result.token = token
    run.result.torch_version = run.torch.__version__
    fd = os.open(os.path.join(out_dir, "result.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(ENCODE(run.result.to_json()))  # one write: json.dump writes each token apart


def flush_output() -> None:
    """What the submission printed, out before the process leaves with os._exit: through
    whichever streams it left in sys.stdout and sys.stderr and the interpreter's own. A stream it
    closed or detached is its own business: the result is written already, and a correct answer
    that closed sys.stdout is still a correct answer (it crashed on this flush before)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()  # type: ignore[union-attr]  # None (no console) raises, and is passed over
        except Exception:  # noqa: BLE001 - closed, detached, or a learner's object that raises
            pass


def preload() -> None:
    """What every job imports, loaded before the job arrives (a cold child, confined, while grind
    builds its job: runner.main; a warm server imports the same before its first fork)."""
    import numpy  # noqa: F401
    import safetensors.numpy  # noqa: F401
    import torch  # noqa: F401


def execute(job: dict[str, Any], control: Any) -> None:
    """Run every subject of one job through every case and write the observations.

    ``control`` is the parent's control stream (a text stream on a pipe, or None): "ready" once
    the checks are loaded (the learner's clock starts there), then "case <subject> <instance>"
    before each case, so a timeout can name the case it interrupted. The steps: load the checks,
    list the subjects, start the guards (learner runs), run each subject over every instance,
    time the first one (speed runs: the reference in a trusted job, the learner in a learner's),
    write the result and leave without
    running anything the submission may have registered (atexit handlers, threads)."""
    seal_imports()
    install_kit(job.get("kit"))
    token = job.pop("token")  # out of the job before any learner code can look at it

    import numpy as np
    import torch
    from safetensors.numpy import save_file

    torch.set_num_threads(1)
    bind_conversions(np, torch)
    run = Run(job, control, np, torch)
    subjects = _ready(run)
    # Trusted runs check the manifest's forbidden names here, where torch is: a typo guards nothing.
    run.result.unresolved = [d for d in job.get("check_forbidden", []) if _heap._resolve(d) is None]
    speed_case = getattr(run.checks, "SPEED", None) if job.get("time_speed") else None
    torch.manual_seed(0)  # every generator torch has; each case instance then only reseeds (see reseed)
    start_guards(run)
    if run.integrity is not None and run.guards is not None:
        _watch_learner_writes(run)

    first = None
    for index, (subject_id, spec) in enumerate(subjects):
        subject = run_subject(run, subject_id, spec, record_inputs=bool(job.get("record_inputs")) and index == 0)
        first = subject if index == 0 else first

    if run.guards:
        run.guards.stop_watching()  # the learner's speed is timed without the guard's overhead
    if isinstance(speed_case, dict) and subjects:
        time_speed(run, subjects[0][0], first, speed_case)
    if run.guards:
        faulthandler.cancel_dump_traceback_later()
    if run.check_integrity() and subjects:
        run.result.subjects[subjects[0][0]].forbidden = run.hits()
    write_result(run, token, save_file)
    flush_output()
    run.say("done")  # a warm server answers now, without waiting for this process to tear down
    os._exit(0)  # skip atexit handlers and non-daemon threads the submission may have left


def _ready(run: Run) -> list[tuple[str, dict[str, Any]]]:
    """The checks loaded (and, for marks, the integrity record's baseline), "ready" said, and the
    subjects listed. A mistake in the exercise's own files ends the job here: one line on stderr."""
    job = run.job
    try:
        load_checks(run)
        if job.get("marked"):
            # torch._dynamo, imported on first use (an optimizer, DDP), patches torch as it loads
            # (torch.manual_seed wrapped, properties registered): imported before the integrity
            # record, and before "ready", so not on the learner's clock (a warm server imports it
            # once, before it forks the first marks job: see serve).
            import torch._dynamo  # noqa: F401
            if job.get("guard"):
                # The record's walk (0.2-0.4 s) before "ready": not on the learner's clock; it is
                # refreshed once the guards' stand-ins are in place (below).
                run.integrity = _integrity.baseline()
        run.say("ready")
        return list_subjects(run)
    except AuthoringError as exc:
        sys.stderr.write(f"{_protocol.AUTHORING_PREFIX}{exc}\n")
        sys.stderr.flush()
        os._exit(1)


def _watch_learner_writes(run: Run) -> None:
    """Marks runs with guards: the integrity record taken after the checks wrapped what they
    watch and before the guards' profile hook (which would see every call of its walk), refreshed
    now that their stand-ins are in place: all before the learner's file exists in this process.
    From here every write to a library's attribute is logged, and looked at each time a learner
    call returns."""
    run.integrity.refresh()
    learner_file, guards = str(run.job["subjects"][0].get("path", "")), run.guards

    def is_learner(frame: Any) -> bool:
        return frame.f_code.co_filename == learner_file or bool(guards._learner_frame(frame))

    run.integrity.watch_writes(is_learner)
    guards.before_learner, guards.after_learner = run.integrity.enter, run.check_transition
