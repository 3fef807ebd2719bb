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
    if not isinstance(name, str) or not name or name != name.strip() or any(c in name for c in "[]") \
            or "::" in name:
        raise CaseError(f"{where}: a case name is a non-empty string without spaces at its ends, "
                        "brackets or '::' (e.g. 'worked_example')")
    if kind not in KINDS:
        raise CaseError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    known = set(REQUIRED) | set(OPTIONAL)
    for key in keys:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise CaseError(f"{where}: unknown key {key!r}{hint}; a case takes {', '.join(sorted(known))}")
    for key in REQUIRED:
        if key not in keys:
            raise CaseError(f"{where}: missing {key!r}")
        if not callable(keys[key]):
            raise CaseError(f"{where}: {key!r} must be a function, got {type(keys[key]).__name__}")
    for key, kinds in OPTIONAL.items():
        if key in keys and kinds is not None and kind not in kinds:
            raise CaseError(f"{where}: {key!r} belongs to {' or '.join(kinds)} cases only, not {kind}")
    if kind == "random":
        sizes = keys.get("sizes")
        if not isinstance(sizes, (list, tuple)) or not sizes \
                or not all(type(s) is int and s > 0 for s in sizes) or list(sizes) != sorted(set(sizes)):
            raise CaseError(f"{where}: a random case needs 'sizes', a list of positive integers in ascending "
                            f"order (the first failing instance is then the smallest), got {sizes!r}")
        seeds = keys.get("seeds", 2)
        if type(seeds) is not int or seeds < 1:
            raise CaseError(f"{where}: 'seeds' is how many seeds per size, a positive integer, got {seeds!r}")
    if "shown" in keys and (not isinstance(keys["shown"], (list, tuple))
                            or not all(isinstance(s, str) for s in keys["shown"])):
        raise CaseError(f"{where}: 'shown' lists observation names, got {keys['shown']!r}")
    if "entries" in keys and not callable(keys["entries"]):
        raise CaseError(f"{where}: 'entries' must be a function of the inputs, "
                        f"got {type(keys['entries']).__name__}")
    if "world_size" in keys and (type(keys["world_size"]) is not int
                                 or not 2 <= keys["world_size"] <= MAX_WORLD_SIZE):
        raise CaseError(f"{where}: 'world_size' is how many ranks run the case, an integer from 2 to "
                        f"{MAX_WORLD_SIZE}, got {keys['world_size']!r}")
    if "entries" not in keys and callable(getattr(keys["call"], "entries", None)):
        keys["entries"] = keys["call"].entries
    return {"name": name, "kind": kind, **keys}
