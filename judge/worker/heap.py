"""What the guards know of this process's objects, read without running any of them: the warm
server's frozen heap (an index of torch's functions and classes, made once before each fork), a
forbidden name's object and the Python functions that do its work, code fingerprints, and the
classes that exist before the learner's file does.

Stdlib-only, loaded by the child with guards.py (its only user, besides poison.py through it),
but for the warm server's sort of its index (``AddressIndex.merge``), which uses numpy there;
none of it may run learner code: it runs inside the guards' hooks, with profiling off.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import sys
import types
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

# A class's MRO read through type's own descriptor, so that a learner's metaclass cannot run code
# while the hooks look (they run with profiling off: anything they call is unwatched).
_MRO = type.__dict__["__mro__"].__get__
# Identity keys: object.__hash__ is the pointer hash, unique among live objects (everything keyed
# here is kept alive), and unlike id() it raises no "builtins.id" audit event, which would cost a
# call of the audit hook on every event the profile hook sees.
_addr = object.__hash__
_SUBCLASSES = type.__dict__["__subclasses__"]


class AddressIndex:
    """A multimap from an ``_addr`` to the rows filed under it (each row ``width`` objects), kept
    small: the warm server holds its indexes for its whole life, and every job it forks shares
    them.

    Why not a dict of lists of tuples: for torch's ~27,000 functions and ~16,000 names that took
    6.2 MB (an int key, a list and a tuple per entry), most of the warm server's memory beyond
    torch itself. Here the addresses are one sorted ``array('q')`` and each column of the rows one
    list parallel to it, 16-24 bytes an entry, and a lookup is a binary search (a job makes a
    few hundred). Rows are added to unsorted columns of the same kind and sorted in one go by
    ``merge`` (numpy's stable argsort where the warm server has numpy, which makes no Python
    object per row: small objects made and dropped by the thousand leave the pages they touched
    in the process for good). Rows under one address keep the order they were added in."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.clear()

    def clear(self) -> None:
        self._keys = array("q")
        self._columns: list[list[Any]] = [[] for _ in range(self.width)]
        self._sorted = 0  # the first _sorted keys are sorted and searchable; the rest wait for merge

    def __len__(self) -> int:
        """How many rows it holds."""
        return len(self._keys)

    def add(self, key: int, *row: Any) -> None:
        """File ``row`` under ``key``; searchable after the next ``merge``."""
        self._keys.append(key)
        for column, value in zip(self._columns, row):
            column.append(value)

    def merge(self) -> None:
        """Sort every row added since the last merge in with the others (a stable sort: rows under
        one key keep the order they were added in)."""
        if self._sorted == len(self._keys):
            return
        try:
            import numpy

            order: Any = numpy.argsort(numpy.frombuffer(self._keys, dtype=numpy.int64), kind="stable")
        except ImportError:  # not in the warm server (a test): the same order, made of Python ints
            order = sorted(range(len(self._keys)), key=self._keys.__getitem__)
        keys = array("q", map(self._keys.__getitem__, order))
        self._columns = [list(map(column.__getitem__, order)) for column in self._columns]
        self._keys, self._sorted = keys, len(keys)

    def get(self, key: int, default: Any = ()) -> Any:
        """The rows filed under ``key`` in the order they were added (the objects themselves when
        ``width`` is 1, else tuples), or ``default`` when none. Rows not merged yet are merged first."""
        if self._sorted != len(self._keys):
            self.merge()
        keys, columns = self._keys, self._columns
        start = end = bisect_left(keys, key)
        while end < len(keys) and keys[end] == key:
            end += 1
        if start == end:
            return default
        if self.width == 1:
            return columns[0][start:end]
        return [tuple(column[i] for column in columns) for i in range(start, end)]


# The functions that existed when the warm server last forked, by their code object (kept alive,
# so no address is reused): see freeze_functions. Empty in a cold run.
_FROZEN_USERS = AddressIndex(1)
# Where torch's modules hold each function, builtin and class, as the warm server last saw them
# (see freeze_functions): _addr(value) -> (module, name) rows, and each indexed module's namespace
# size then. Empty in a cold run.
_TORCH_HOLDERS = AddressIndex(2)
_INDEXED: dict[str, tuple[Any, int]] = {}  # module name -> (module, len(vars(module)) when indexed)
_MODULES_AT_FREEZE: list[int] = []  # len(sys.modules) at the warm server's last freeze; empty in a cold run
_HELD_TYPES = (type, types.FunctionType, types.BuiltinFunctionType)
# Every class that existed at the server's last freeze, by _addr, and the classes themselves
# (held: no address is reused). Empty in a cold run.
_FROZEN_CLASSES: set[int] = set()
_FROZEN_CLASS_OBJECTS: list[Any] = []


def _torch_namespaces() -> Iterator[tuple[str, Any, dict[str, Any]]]:
    for name, module in list(sys.modules.items()):
        if not name.startswith("torch") or module is None:
            continue
        try:
            yield name, module, vars(module)
        except TypeError:
            continue


def _index_torch_holders() -> None:
    """Index every torch module namespace, once per change of sys.modules: a job's guards then
    put their stand-ins in place by lookup instead of walking torch's thousand-odd namespaces
    (35 ms of every warm job)."""
    _TORCH_HOLDERS.clear()
    _INDEXED.clear()
    for name, module, namespace in _torch_namespaces():
        _INDEXED[name] = (module, len(namespace))
        for key, value in list(namespace.items()):
            if issubclass(type(value), _HELD_TYPES):  # type(): a module's lazy objects run no code
                _TORCH_HOLDERS.add(_addr(value), module, key)
    _TORCH_HOLDERS.merge()


def freeze_functions() -> None:
    """The warm server, before each fork: index the functions made since the last fork by their
    code, then ``gc.freeze()`` everything. A job's ``_drop_shared_codes`` then reads the index for
    the server's objects and walks only what the job itself made (``gc.get_objects`` leaves the
    frozen generation out) instead of torch's whole heap on every job (60 ms each). The answer is
    the same as a walk over everything: the index holds every function the walk would have met.
    Freezing before a fork is what the gc documentation recommends anyway (fewer copied pages)."""
    new_class = not _FROZEN_CLASSES
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType:
            _FROZEN_USERS.add(_addr(obj.__code__), obj)
        elif not new_class and _is_class(obj):
            new_class = True
    _FROZEN_USERS.merge()
    if new_class:  # every class made since the last freeze was among the objects just walked
        _FROZEN_CLASS_OBJECTS.clear()
        _FROZEN_CLASSES.clear()
        _FROZEN_CLASSES.update(_all_classes(_FROZEN_CLASS_OBJECTS))
    if len(_INDEXED) != sum(1 for name, module in list(sys.modules.items())
                            if name.startswith("torch") and module is not None):
        _index_torch_holders()
    _MODULES_AT_FREEZE[:] = [len(sys.modules)]
    gc.freeze()


def torch_imported_since_freeze(most: int = 64) -> bool:
    """Whether a torch module may have been imported since the warm server's last freeze (True
    in a cold run). Read from the end of ``sys.modules``, which keeps insertion order: the
    modules added since then are its last entries, so this touches only those, not the
    thousand-odd modules a walk would (in a fresh fork, touching each one copies the page its
    reference count lives on: 4-6 ms of every warm job). Anything it cannot tell (fewer modules
    than then, more than ``most`` new ones) counts as an import."""
    if not _MODULES_AT_FREEZE or not _INDEXED:
        return True
    added = len(sys.modules) - _MODULES_AT_FREEZE[0]
    if added < 0 or added > most:
        return True
    names = reversed(sys.modules)
    return any(next(names).startswith("torch") for _ in range(added))


# ---------------------------------------------------------------------------------------------
# Helpers (none of them may run learner code: they run inside the hooks, with profiling off)


def _fingerprint(code: types.CodeType) -> tuple[Any, ...]:
    """What a code object is, apart from where it came from (file name, line numbers): two
    compilations of the same source give the same fingerprint. Nested code objects count by
    their own fingerprints. Only the low flag bits count (generator, varargs, ...): ``compile``
    passes its caller's ``from __future__`` flags on to the code it makes."""
    consts = tuple(_fingerprint(c) if type(c) is types.CodeType else _constant(c) for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_argcount,
            code.co_kwonlyargcount, code.co_flags & 0x3FF)


_LITERALS = (str, bytes, int, float, complex, bool, type(None), type(Ellipsis))


def _constant(value: Any) -> Any:
    """A code constant as data, without running anything of it: ``code.replace(co_consts=...)``
    can put any object there, whose ``repr`` would be the learner's code, run unwatched."""
    if type(value) in _LITERALS:
        return (type(value).__name__, repr(value))
    if type(value) in (tuple, frozenset):
        items = [_constant(v) for v in value]
        return (type(value).__name__, tuple(items) if type(value) is tuple else tuple(sorted(map(repr, items))))
    return ("object", _addr(type(value)))


def _resolve(dotted: str) -> Any:
    """The object a dotted name stands for: the longest importable module prefix, then
    attributes (``torch.ops.aten._fused_adam_`` is an attribute chain, not a module path)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except (AttributeError, RuntimeError):
            return None
        return obj
    return None


def _unwrap(function: Any) -> Any:
    try:
        return inspect.unwrap(function)
    except ValueError:  # a cycle of __wrapped__
        return function


def _functions_of(original: Any) -> list[types.FunctionType]:
    """The Python functions that do the work of a forbidden object, decorators removed: the
    function itself, or every method a class defines (its own, not its bases')."""
    if _is_class(original):
        members: list[Any] = []
        for value in vars(original).values():
            if isinstance(value, (staticmethod, classmethod)):
                members.append(value.__func__)
            elif isinstance(value, property):
                members += [value.fget, value.fset, value.fdel]
            else:
                members.append(value)
    else:
        members = [original]
    found = []
    for member in members:
        inner = _unwrap(member) if callable(member) else None
        if type(inner) is types.FunctionType:
            found.append(inner)
    return found


def _builtins_behind(original: Any) -> list[Any]:
    """The C functions a torch operator object calls: ``torch.ops.aten.X`` (a packet) and each of
    its overloads keep theirs in ``_op``. Duck-typed: this module never imports torch."""
    found = []
    candidates = [original]
    overloads = getattr(original, "overloads", None)
    if callable(overloads) and type(original).__module__.startswith("torch"):
        try:
            candidates += [getattr(original, name) for name in overloads()]
        except (AttributeError, RuntimeError, TypeError):
            pass
    for candidate in candidates:
        op = getattr(candidate, "_op", None) if type(candidate).__module__.startswith("torch") else None
        if isinstance(op, types.BuiltinFunctionType):
            found.append(op)
    return found


def _is_class(value: Any) -> bool:
    return any(c is type for c in _MRO(type(value)))


def _all_classes(keep: list[Any]) -> set[int]:
    """Every class that exists now (before the learner's code): later ones are the learner's."""
    seen: set[int] = set()
    todo: list[Any] = [object]
    while todo:
        cls = todo.pop()
        if _addr(cls) in seen:
            continue
        seen.add(_addr(cls))
        keep.append(cls)
        try:
            todo.extend(_SUBCLASSES(cls))
        except TypeError:
            pass
    return seen


def _known_classes(keep: list[Any]) -> set[int]:
    """Every class that exists now. In a warm job: the server's classes at its last freeze plus
    the ones made since (the job's gc list holds only objects made after the freeze, and every
    class made at run time is gc-tracked), instead of a walk over every class (10-30 ms per
    job). A class this misses (a static type of a C module first imported by the job's trusted
    code) is only watched more strictly, as if the learner had made it."""
    if not _FROZEN_CLASSES:
        return _all_classes(keep)
    known = set(_FROZEN_CLASSES)
    for obj in gc.get_objects():
        if _is_class(obj) and _addr(obj) not in known:
            known.add(_addr(obj))
            keep.append(obj)
    return known


def _near_recursion_limit(room: int = 40) -> bool:
    def down(n: int) -> int:
        return down(n - 1) if n else 0

    try:
        down(room)
    except RecursionError:
        return True
    return False
