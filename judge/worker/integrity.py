"""Marks mode: what the learner's code changed in the libraries the judge's own code relies on.

Why this exists. A run's observations are taken in the learner's process, by the judge's code
(``checks.py``, the runner) calling torch, numpy, safetensors and the standard library after the
learner's function returned. A submission that replaces one of those functions (``torch.load``,
``torch.Tensor.equal``, ``json.dumps``) changes what the judge sees. The static scan of
judge/introspection.py refuses the plain spellings of such a change, but a module can be reached
through any expression (a function's return value, tuple unpacking, an exception's ``obj``,
``(torch.nn.Module or 0).state_dict = ...``), and no list of expressions is complete: a fourth
red-team review passed six of them.

What no expression can hide is the change itself. Before the learner's file loads, every loaded
module's namespace and the namespace of every class those modules define are recorded (the
objects themselves, not copies of their values); after each case, before anything the case
observed leaves the process, every recorded name must still hold the very object it held. A
function, class, module or descriptor replaced or removed is a breach, however the module was
reached. New names are not (a lazy import adds attributes), nor are plain values (libraries
rebind their own counters and caches: ``tempfile.tempdir``, torch.distributed's group count).

The same check refuses a Python thread that outlives a learner call: a thread could change a
function while the judge's code observes and put it back before the next check.

Everything the check uses is bound here, when the runner starts and before any learner code
exists, and the comparison is made by identity in C (``operator.is_not`` over
``operator.itemgetter``), so no learner object's ``__eq__`` runs and rebinding ``any`` or
``map`` in ``builtins`` does not blind it (that rebinding is itself a breach of ``builtins``).
The recorded state lives in a closure, which only the interpreter's frame and object doors reach
(``__closure__``, ``gc``, frames): those are what the marks scan refuses, on every exercise whose
verdict rests on something observed in the process.
"""

from __future__ import annotations

import itertools
import operator
import sys
import types
import warnings
from typing import Any, Callable

# Values whose replacement is a breach: what the judge's code calls or looks attributes up in.
_WATCHED = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type,
            staticmethod, classmethod, property, types.MethodDescriptorType, types.WrapperDescriptorType,
            types.MemberDescriptorType, types.GetSetDescriptorType, types.ClassMethodDescriptorType)
# Hooks that libraries set while they run, and that none of the judge's code calls:
# torch.distributed's init_process_group prefixes every rank's uncaught exceptions (sys.excepthook).
SETTABLE = frozenset({"sys.excepthook", "sys.unraisablehook", "sys.displayhook", "sys.breakpointhook",
                      "threading.excepthook", "warnings.showwarning", "warnings._showwarnmsg_impl"})
# Wrappers a library puts around its own functions the first time they are used: torch.optim's
# Optimizer wraps its subclass's ``step`` for the profiler when the first instance is made. Such a
# replacement is accepted only when the new function runs that library's own wrapper code (which
# no learner can make without ``__code__``, refused for marks) around the very function it replaced.
LIBRARY_WRAPPERS = (("torch.optim.optimizer", ("Optimizer", "profile_hook_step")),)
MAX_BREACHES = 5  # a few names say enough; the rest are the same change seen elsewhere


def _watched(value: Any, isinstance: Callable[..., bool] = isinstance) -> bool:
    return isinstance(value, _WATCHED) or (callable(value) and type(value).__module__ != "builtins")


def baseline() -> Callable[[], list[str]]:
    """Record every loaded module's and library class's namespace now; return the check, which
    lists the dotted names (``torch.serialization.load``) that no longer hold the function, class,
    module or descriptor they held, and ``thread`` when a Python thread other than the caller's
    is running. Recording and checking run in C loops (about 0.05 s and 0.01 s with torch
    loaded): every name is compared, and only a difference is looked at in Python."""
    is_not, current_frames = operator.is_not, sys._current_frames
    any_, map_, list_, len_, tuple_, zip_, type_ = any, map, list, len, tuple, zip, type
    mro_of = operator.attrgetter("__mro__")
    records: list[tuple[str, Any, Any, tuple[Any, ...], tuple[str, ...]]] = []
    holders: list[Any] = []  # every module and class recorded, whose own type and bases must stay
    with warnings.catch_warnings():  # looking at a deprecated alias warns (torch.distributed.reduce_op)
        warnings.simplefilter("ignore")
        _record_modules(records, holders)
    modules = tuple_(h for h in holders if isinstance(h, types.ModuleType))
    classes = tuple_(h for h in holders if isinstance(h, type))
    wrapper_codes = _library_wrapper_codes()
    ne = operator.ne
    class_records = [(h, vars(h), frozenset(vars(h))) for h in classes]
    class_namespaces = tuple_(r[1] for r in class_records)
    class_sizes = tuple_(map_(len_, class_namespaces))
    module_types = tuple_(map_(type_, modules))  # a module's __class__ swapped for one with __getattr__
    mros = tuple_(map_(mro_of, classes))  # a library class's __bases__ reassigned

    def breaches() -> list[str]:
        found: list[str] = []
        for where, namespace, getter, before, names in records:
            try:
                now = getter(namespace)
            except (KeyError, TypeError):  # a name removed: a breach if it held something watched
                found += [f"{where}.{name}" for name, old in zip_(names, before)
                          if name not in namespace and _watched(old) and f"{where}.{name}" not in SETTABLE]
                continue
            if any_(map_(is_not, before, now)):
                found += [f"{where}.{name}" for name, old, new in zip_(names, before, now)
                          if old is not new and _watched(old) and f"{where}.{name}" not in SETTABLE
                          and not _wraps(new, old, wrapper_codes)]
            if len_(found) >= MAX_BREACHES:
                break
        # A name added to a library class that shadows what it inherited (torch.Tensor.equal is
        # torch._C.TensorBase's: ``(torch.Tensor or 0).equal = ...`` adds a key, replaces none).
        if any_(map_(ne, class_sizes, map_(len_, class_namespaces))):
            for (cls, namespace, known), size in zip_(class_records, class_sizes):
                if len_(namespace) != size:
                    found += _shadowing(cls, namespace, known)
        if any_(map_(is_not, module_types, map_(type_, modules))):
            found += [m.__name__ + ".__class__" for m, t in zip_(modules, module_types) if type_(m) is not t]
        if any_(map_(is_not, mros, map_(mro_of, classes))):
            found += [c.__qualname__ + ".__bases__" for c, m in zip_(classes, mros) if mro_of(c) is not m]
        if len_(current_frames()) > 1:  # the caller's thread, and another one
            found.append("thread")
        return list_(found[:MAX_BREACHES])

    return breaches


def _shadowing(cls: type, namespace: Any, known: frozenset[Any]) -> list[str]:
    """The names ``cls`` gained since the record that hide an attribute of one of its bases."""
    found = []
    for name in [n for n in list(namespace) if type(n) is str and n not in known]:
        if _watched(namespace[name]) and any(name in vars(base) for base in cls.__mro__[1:]):
            found.append(f"{cls.__module__}.{cls.__qualname__}.{name}")
    return found


def _library_wrapper_codes() -> frozenset[int]:
    """The ids of the code objects of LIBRARY_WRAPPERS' inner functions (kept alive by their module)."""
    codes: list[Any] = []
    for module_name, path in LIBRARY_WRAPPERS:
        target: Any = sys.modules.get(module_name)
        for part in path:
            target = getattr(target, part, None)
        code = getattr(target, "__code__", None)
        if isinstance(code, types.CodeType):
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return frozenset(id(c) for c in codes)


def _wraps(new: Any, old: Any, wrapper_codes: frozenset[int]) -> bool:
    """Whether ``new`` is a library's own wrapper (LIBRARY_WRAPPERS) around ``old`` itself."""
    if type(new) is not types.FunctionType or id(new.__code__) not in wrapper_codes:
        return False
    return vars(new).get("__wrapped__") is old


def _record_modules(records: list[Any], holders: list[Any]) -> None:
    seen: set[int] = set()
    for module_name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType):
            continue
        try:
            namespace = vars(module)
        except TypeError:
            continue
        _record(records, module_name, namespace)
        holders.append(module)
        values = list(namespace.values())
        for value in itertools.compress(values, map(isinstance, values, itertools.repeat(type))):
            if id(value) not in seen and getattr(value, "__module__", None) == module_name:
                seen.add(id(value))
                holders.append(value)
                _record(records, f"{module_name}.{value.__qualname__}", vars(value))


def _record(records: list[Any], where: str, namespace: Any) -> None:
    """One namespace: its names and the objects they hold, as tuples (a one-name getter is
    wrapped so that it too returns a tuple)."""
    names = tuple(name for name in namespace if type(name) is str)
    if not names:
        return
    getter = operator.itemgetter(*names) if len(names) > 1 else _one(names[0])
    records.append((where, namespace, getter, getter(namespace), names))


def _one(name: str) -> Callable[[Any], tuple[Any]]:
    get = operator.itemgetter(name)

    def getter(namespace: Any) -> tuple[Any]:
        return (get(namespace),)

    return getter


PREFIX = "Not accepted for marks: "


def describe(breach: str) -> str:
    """The forbidden record's text for one breach (the parent shows it as the verdict's message)."""
    if breach == "thread":
        what = "a thread of yours was still running after your function returned"
    else:
        what = f"your code replaced {breach} while grind graded it"
    return (f"{PREFIX}{what}. grind's own checks use the libraries in your process, so changing them (or leaving "
            "a thread that could) would change what they observe. No answer to this exercise needs it: remove "
            "it and submit again.")
