"""``case(...)``: one case of a checks module, checked when the author writes it.

A case is the plain dict the judge runs (``name``, ``kind``, ``inputs``, ``call`` and the
optional keys below); ``case`` builds it and refuses, while the checks module loads, what would
otherwise surface later as a puzzling failure of the reference: an unknown key (``input`` for
``inputs``), a missing ``inputs`` or ``call``, sizes on a case that is not random. The error names
the exercise and the case, and ``grind validate`` shows it.
"""

import difflib
import os
import sys

KINDS = ("example", "edge", "random")
REQUIRED = ("inputs", "call")
# key -> the kinds that may carry it (None: every kind)
OPTIONAL = {
    "sizes": ("random",),  # ascending sizes; each becomes inputs(size=..., seed=...)
    "seeds": ("random",),  # seeds per size (default 2)
    "shown": ("example",),  # which observations the statement prints (default: every small numeric one)
    "entries": None,  # entries(inputs) -> {observation: [(label, shape), ...]}: what a flat row holds
    "world_size": None,  # run the call on this many torch.distributed ranks (gloo), observed per rank
}
MAX_WORLD_SIZE = 8  # every rank is a process of the run, under the run's process and time limits


class CaseError(ValueError):
    """A case written wrong. Raised while the checks module loads, naming exercise and case."""


def _exercise():
    """The exercise whose checks (or pitfalls) module is calling: its folder's name."""
    frame = sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("grind_kit"):
        frame = frame.f_back
    filename = frame.f_globals.get("__file__") if frame is not None else None
    return os.path.basename(os.path.dirname(filename)) if filename else "?"


def case(name, kind="edge", **keys):
    """One case, as the dict the judge runs::

        case("worked_example", "example", inputs=script(...), call=lockstep)
        case("random", "random", inputs=random_inputs, call=lockstep, sizes=[1, 4, 16], seeds=2)

    ``inputs(**params)`` builds fresh inputs (called with ``size`` and ``seed`` for a random
    case); ``call(subject, **inputs)`` runs the subject and returns named observations.

    ``world_size=R`` runs ``call`` on R real ``torch.distributed`` ranks (gloo), every rank with
    the same inputs; the observations come back per rank, as ``rank r: NAME``.

    ``entries(inputs)`` names the pieces of a flattened observation for the report
    (``{"params per step": [("param 0", [2, 3]), ("param 1", [3])]}``). Without one, a case
    takes its ``call``'s own ``entries`` attribute when it has one: the kit's ``lockstep`` and
    ``training_loop`` name their "params per step" that way, and a checks module can do the
    same for its own call (``run_epoch.entries = param_entries("grads per step")``)."""
    where = f"exercise '{_exercise()}', case {name!r}"
    for check in (_name_problem, _kind_problem, _unknown_key_problem, _required_problem, _kind_only_problem,
                  _random_problem, _value_problem):
        problem = check(name, kind, keys)
        if problem is not None:
            raise CaseError(f"{where}: {problem}")
    if "entries" not in keys and callable(getattr(keys["call"], "entries", None)):
        keys["entries"] = keys["call"].entries
    return {"name": name, "kind": kind, **keys}


# Each check of case(name, kind, **keys) says what is wrong, or None; case() runs them in this
# order and refuses the first problem found.

def _name_problem(name, kind, keys):
    if not isinstance(name, str) or not name or name != name.strip() or any(c in name for c in "[]") \
            or "::" in name:
        return ("a case name is a non-empty string without spaces at its ends, brackets or '::' "
                "(e.g. 'worked_example')")
    return None


def _kind_problem(name, kind, keys):
    return None if kind in KINDS else f"kind {kind!r} is not one of {', '.join(KINDS)}"


def _unknown_key_problem(name, kind, keys):
    known = set(REQUIRED) | set(OPTIONAL)
    for key in keys:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return f"unknown key {key!r}{hint}; a case takes {', '.join(sorted(known))}"
    return None


def _required_problem(name, kind, keys):
    for key in REQUIRED:
        if key not in keys:
            return f"missing {key!r}"
        if not callable(keys[key]):
            return f"{key!r} must be a function, got {type(keys[key]).__name__}"
    return None


def _kind_only_problem(name, kind, keys):
    for key, kinds in OPTIONAL.items():
        if key in keys and kinds is not None and kind not in kinds:
            return f"{key!r} belongs to {' or '.join(kinds)} cases only, not {kind}"
    return None


def _ascending_sizes(sizes):
    return (isinstance(sizes, (list, tuple)) and bool(sizes) and all(type(s) is int and s > 0 for s in sizes)
            and list(sizes) == sorted(set(sizes)))


# A random case's own keys: (key, its default, is the value right?, what is wrong with it)
RANDOM_KEYS = (
    ("sizes", None, _ascending_sizes,
     lambda v: ("a random case needs 'sizes', a list of positive integers in ascending order (the first failing "
                f"instance is then the smallest), got {v!r}")),
    ("seeds", 2, lambda v: type(v) is int and v >= 1,
     lambda v: f"'seeds' is how many seeds per size, a positive integer, got {v!r}"),
)
# The optional keys' values, checked where given: (key, is the value right?, what is wrong with it)
VALUE_CHECKS = (
    ("shown", lambda v: isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v),
     lambda v: f"'shown' lists observation names, got {v!r}"),
    ("entries", callable, lambda v: f"'entries' must be a function of the inputs, got {type(v).__name__}"),
    ("world_size", lambda v: type(v) is int and 2 <= v <= MAX_WORLD_SIZE,
     lambda v: f"'world_size' is how many ranks run the case, an integer from 2 to {MAX_WORLD_SIZE}, got {v!r}"),
)


def _random_problem(name, kind, keys):
    if kind != "random":
        return None
    for key, default, right, wrong in RANDOM_KEYS:
        value = keys.get(key, default)
        if not right(value):
            return wrong(value)
    return None


def _value_problem(name, kind, keys):
    for key, right, wrong in VALUE_CHECKS:
        if key in keys and not right(keys[key]):
            return wrong(keys[key])
    return None
