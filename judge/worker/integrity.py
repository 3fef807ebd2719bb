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
objects themselves, not copies of their values), and from then on every write to them is logged:
a module's through its class, swapped for a subclass whose ``__setattr__`` logs first, a class's
through the interpreter's ``object.__setattr__`` audit event where it fires (CPython 3.11 raises
it only for a class's special attributes: an ordinary ``Class.x = ...`` is seen only by the
comparisons below).

- A function, class, module or descriptor written by the learner's own code (the writing frame
  runs the learner's file) is a breach at once, even if it is put back before anyone looks: a
  fifth review's one-shot ``numpy.array`` put itself back while the judge converted the
  observations.
- Each time a learner call returns (:meth:`Record.transition`, run by the guards' entry-point
  wrapper, and after the file's top level), every name written meanwhile by library code must
  hold what was recorded (``unittest.mock``, ``torch.compile``), no library class may have
  gained a name that hides an inherited one, no Python thread other than the runner's may run,
  and no torch function or dispatch mode may be left active (a mode rewrites every torch call the
  judge makes without writing anything). This costs what was written, not what was recorded.
- At the end of the learner's run, and in every rank after each distributed case,
  :meth:`Record.breaches` compares the whole record by identity in C loops, for what the log
  cannot see (a module's own ``global`` statement, a module type that could not be swapped).

New names are not breaches (a lazy import adds attributes), nor are plain values (libraries rebind
their own counters and caches: ``tempfile.tempdir``, torch.distributed's group count), the hooks
libraries set (SETTABLE), or a library's own wrapper around the very function it replaces
(LIBRARY_WRAPPERS). ``torch._dynamo``, which patches torch as it loads, is imported first.

Everything the checks use is bound when the record is taken, before any learner code exists, and
comparisons are made by identity (``operator.is_not``), so no learner object's ``__eq__`` runs and
rebinding ``any`` in ``builtins`` blinds nothing (that rebinding is itself a breach). The record
lives in objects only the interpreter's frame and object doors reach (frames, ``gc``,
``__closure__``): those are what the marks scan refuses, on every exercise whose verdict rests on
something observed in the process.
"""

from __future__ import annotations

import itertools
import operator
import sys
import types
import warnings
from typing import Any

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


def _watched(value: Any) -> bool:
    """By the value's own type, never its ``__class__`` (a property: torch.distributed's
    deprecated ``reduce_op`` warns when asked, and a learner's object could answer anything)."""
    kind = type(value)
    return issubclass(kind, _WATCHED) or (callable(value) and kind.__module__ != "builtins")


class Record:
    """Every loaded module's and library class's namespace, as recorded (see the module's docstring).

    :meth:`breaches` lists the dotted names (``torch.serialization.load``) that no longer hold the
    function, class, module or descriptor they held, and ``thread`` when a Python thread other
    than the caller's runs. Its common case, nothing changed, is a single pass of C loops (about
    0.01 s with torch loaded, and no call the guards' profile hook sees): every name is compared
    by identity, and only a difference is looked at in Python."""

    def __init__(self) -> None:
        records: list[tuple[str, Any, Any, tuple[Any, ...], tuple[str, ...]]] = []
        holders: list[Any] = []  # every module and class recorded, whose own type and bases must stay
        with warnings.catch_warnings():  # looking at a deprecated alias warns (torch.distributed.reduce_op)
            warnings.simplefilter("ignore")
            _record_modules(records, holders)
        self._records = records
        self._getters = tuple(r[2] for r in records)
        self._namespaces = tuple(r[1] for r in records)
        self._modules = tuple(h for h in holders if isinstance(h, types.ModuleType))
        self._classes = tuple(h for h in holders if isinstance(h, type))
        self._class_namespaces = tuple(map(vars, self._classes))
        self._wrapper_codes = _library_wrapper_codes()
        self._modes = _mode_counters()
        # entry -> (its record, its name's place there), and (holder, name) -> entry
        self._slot = tuple((i, k) for i, record in enumerate(records) for k in range(len(record[4])))
        self._entry = {(id(record[3]), name): at for at, (i, k) in enumerate(self._slot)
                       for record in (records[i],) for name in (record[4][k],)}
        self._holders = {id(record[3]): record[3] for record in records}
        self._written: list[tuple[Any, str]] = []  # (module or class, name) set since the last look
        self._caught: list[str] = []  # breaches seen as they happened (a learner's own write)
        self._is_learner: Any = None
        self._entered: list[tuple[int, ...]] = []  # torch's mode depths when each learner call began
        # bound here, before any learner code: rebinding them in builtins blinds nothing
        self._c = (operator.is_not, operator.ne, any, map, len, type, tuple, itertools.chain.from_iterable,
                   operator.itemgetter.__call__, operator.attrgetter("__mro__"), sys._current_frames)
        self.refresh()

    def refresh(self) -> None:
        """Take what every recorded name holds now as the record (the guards have just put their
        stand-ins in place; nothing of the learner's has run)."""
        _, _, _, map_, len_, type_, tuple_, chain, call, mro_of, _ = self._c
        self._before = tuple_(chain(map_(call, self._getters, self._namespaces)))
        self._known = tuple_(map_(frozenset, self._class_namespaces))
        self._sizes = tuple_(map_(len_, self._class_namespaces))
        self._module_types = tuple_(map_(type_, self._modules))  # a module's __class__ swapped
        self._mros = tuple_(map_(mro_of, self._classes))  # a library class's __bases__ reassigned

    def watch_writes(self, is_learner: Any) -> None:
        """From now on, log every write to a recorded module's attribute (the modules' class is
        swapped for a subclass whose ``__setattr__`` logs; a module's own ``global`` statements
        write its dictionary directly and are not seen) and to a recorded class's (the
        interpreter's ``object.__setattr__`` audit event, raised for a class's special attributes).
        ``is_learner(frame)`` says whether a frame runs the learner's code: a watched value
        written from such a frame is a breach at once, even if it is put back before anyone
        looks; one written by library code is looked at when control next comes back to the
        judge (:meth:`transition`)."""
        self._is_learner = is_learner
        log = self._log
        logged: dict[type, type] = {}
        for module in self._modules:
            kind = type(module)
            if kind not in logged:
                logged[kind] = _logging_class(kind, log)
            try:  # past a module type's own __setattr__ (torch's config modules refuse unknown names)
                object.__setattr__(module, "__class__", logged[kind])
            except Exception:  # noqa: BLE001 - a type that cannot be swapped: the full check still covers it
                continue
        self._module_types = tuple(map(type, self._modules))
        holders, get_frame = self._holders, sys._getframe

        def audit(event: str, args: tuple[Any, ...]) -> None:
            if (event == "object.__setattr__" or event == "object.__delattr__") and args \
                    and id(args[0]) in holders and holders[id(args[0])] is args[0]:
                log(args[0], args[1], args[2] if len(args) > 2 else _GONE, get_frame(1))

        sys.addaudithook(audit)

    def _log(self, holder: Any, name: Any, value: Any, frame: Any) -> None:
        """One write to a recorded namespace's ``name`` (called before it happens; ``value`` is
        _GONE for a deletion). Written by the learner's own code (the frame that writes runs the
        learner's file), a watched value is a breach at once: putting it back later changes
        nothing. Written by library code, it is looked at in :meth:`transition`."""
        at = self._entry.get((id(holder), name))
        if at is None and not isinstance(holder, type):
            return  # a name the module did not have: a lazy import, a new global
        old = self._before[at] if at is not None else _GONE
        if not (_watched(old) or _watched(value)):
            return  # data: a flag, a counter, a cache
        self._written.append((holder, name))
        learner = self._is_learner
        if learner is not None and frame is not None and learner(frame):
            where = self._records[self._slot[at][0]][0] if at is not None else _class_name(holder)
            if f"{where}.{name}" not in SETTABLE:
                self._caught.append(f"{where}.{name}")

    def enter(self) -> None:
        """A learner call begins: remember torch's mode stacks as the judge left them."""
        self._entered.append(_depths(self._modes))

    def transition(self) -> list[str]:
        """Control is back with the judge (a learner call returned, the learner's file loaded):
        every name written since the last look must hold what the record says, or be new and
        hide nothing inherited; and no thread of the learner's may run. Costs what was written."""
        written, self._written = self._written, []
        found, self._caught = self._caught, []
        for holder, name in written:
            found += self._breached(holder, name)
        if len(self._c[-1]()) > 1:
            found.append("thread")
        found += _modes(self._modes, self._entered.pop() if self._entered else None)
        mine = {name for name in found if not name.startswith(LIBRARY)}
        return [name for name in dict.fromkeys(found) if name.removeprefix(LIBRARY) not in mine
                or not name.startswith(LIBRARY)][:MAX_BREACHES]

    def _breached(self, holder: Any, name: str) -> list[str]:
        """The breach one logged write made: a recorded name that no longer holds what the record
        says (and is not settable, nor a wrapper of the original), or a new class attribute that
        hides an inherited one."""
        at = self._entry.get((id(holder), name))
        if at is None:
            if isinstance(holder, type):
                return [LIBRARY + name for name in _shadowing(holder, vars(holder), self._known_of(holder),
                                                              self._wrapper_codes)]
            return []
        record, place = self._slot[at]
        where, namespace = self._records[record][0], self._records[record][1]
        old = self._before[at]
        new = namespace.get(name, _GONE) if isinstance(namespace, dict) else vars(holder).get(name, _GONE)
        dotted = f"{where}.{name}"
        if new is not old and dotted not in SETTABLE and _watched(old) and not _wraps(new, old, self._wrapper_codes):
            return [LIBRARY + dotted]
        return []

    def _known_of(self, cls: type) -> frozenset[Any]:
        for klass, known in zip(self._classes, self._known):
            if klass is cls:
                return known
        return frozenset(vars(cls))

    def breaches(self) -> list[str]:
        is_not, ne, any_, map_, len_, type_, tuple_, chain, call, mro_of, current_frames = self._c
        found: list[str] = []
        try:
            changed = any_(map_(is_not, self._before, chain(map_(call, self._getters, self._namespaces))))
        except (KeyError, TypeError):  # a name removed
            found += self._removed()
        else:
            if changed:  # a library rebinds its counters, or something was replaced: look closer
                found += self._replaced(tuple_(chain(map_(call, self._getters, self._namespaces))))
        if any_(map_(ne, self._sizes, map_(len_, self._class_namespaces))):
            # A name added to a library class that hides what it inherited (torch.Tensor.equal is
            # torch._C.TensorBase's: ``(torch.Tensor or 0).equal = ...`` adds a key, replaces none).
            for cls, namespace, known, size in zip(self._classes, self._class_namespaces, self._known, self._sizes):
                if len_(namespace) != size:
                    found += _shadowing(cls, namespace, known, self._wrapper_codes)
        if any_(map_(is_not, self._module_types, map_(type_, self._modules))):
            found += [m.__name__ + ".__class__" for m, t in zip(self._modules, self._module_types) if type_(m) is not t]
        if any_(map_(is_not, self._mros, map_(mro_of, self._classes))):
            found += [c.__qualname__ + ".__bases__" for c, m in zip(self._classes, self._mros) if mro_of(c) is not m]
        if len_(current_frames()) > 1:  # the caller's thread, and another one
            found.append("thread")
        found += _modes(self._modes)
        return found[:MAX_BREACHES]

    def _replaced(self, now: tuple[Any, ...]) -> list[str]:
        """Which watched entries differ (the differing ones found in C, then looked at here)."""
        found: list[str] = []
        differing = itertools.compress(range(len(now)), map(operator.is_not, self._before, now))
        for at in differing:
            record, place = self._slot[at]
            where, _, _, _, names = self._records[record]
            name = names[place]
            old, new = self._before[at], now[at]
            dotted = f"{where}.{name}"
            if dotted not in SETTABLE and _watched(old) and not _wraps(new, old, self._wrapper_codes):
                found.append(dotted)
            if len(found) >= MAX_BREACHES:
                break
        return found

    def _removed(self) -> list[str]:
        """Which watched names are gone (a namespace whose getter failed)."""
        found: list[str] = []
        at = 0
        for where, namespace, _, _, names in self._records:
            for offset, name in enumerate(names):
                if name not in namespace and f"{where}.{name}" not in SETTABLE and _watched(self._before[at + offset]):
                    found.append(f"{where}.{name}")
            at += len(names)
        return found[:MAX_BREACHES]


_GONE = object()


def _mode_counters() -> tuple[tuple[Any, str], ...]:
    """torch's own counters of its mode stacks, bound when the record is taken."""
    torch_c = sys.modules.get("torch._C")
    return tuple((length, what) for name, what in (("_len_torch_function_stack", "mode:torch function"),
                                                   ("_len_torch_dispatch_stack", "mode:torch dispatch"))
                 if (length := getattr(torch_c, name, None)) is not None)


def _modes(counters: tuple[tuple[Any, str], ...], before: tuple[int, ...] | None = None) -> list[str]:
    """A torch function or dispatch mode left on torch's stack: it rewrites every torch call the
    judge's code makes afterwards (``Tensor.detach`` while converting the observations) without
    writing any attribute (a sixth review entered one and never left it). ``before``: the
    stacks' depths when the learner's call began (a check's own mode may hold the learner's call:
    bf16-rounding's watches for half precision, and a seventh review found every correct answer
    refused when any mode counted)."""
    if before is None:
        before = (0,) * len(counters)
    return [what for (length, what), depth in zip(counters, before) if length() > depth]


def _depths(counters: tuple[tuple[Any, str], ...]) -> tuple[int, ...]:
    return tuple(length() for length, _ in counters)


def _class_name(cls: Any) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', '?')}"


def _logging_class(kind: type, log: Any) -> type:
    """A subclass of the module type ``kind`` whose attribute writes are logged first."""
    get_frame = sys._getframe
    set_attr: Any = kind.__setattr__  # the module type's own, taken before any learner code runs
    del_attr: Any = kind.__delattr__

    def __setattr__(self: Any, name: str, value: Any) -> None:
        log(self, name, value, get_frame(1))
        set_attr(self, name, value)

    def __delattr__(self: Any, name: str) -> None:
        log(self, name, _GONE, get_frame(1))
        del_attr(self, name)

    return type(kind.__name__, (kind,), {"__setattr__": __setattr__, "__delattr__": __delattr__,
                                         "__module__": kind.__module__})


def baseline() -> Record:
    """The record, taken now."""
    return Record()


def _shadowing(cls: type, namespace: Any, known: frozenset[Any], wrapper_codes: frozenset[int]) -> list[str]:
    """The names ``cls`` gained since the record that hide an attribute of one of its bases,
    unless a library's own wrapper around that very attribute (torch.optim gives AdamW, which
    inherits Adam's ``step``, a profiling wrapper of its own the first time one is built)."""
    found = []
    for name in [n for n in list(namespace) if type(n) is str and n not in known]:
        inherited = next((vars(base)[name] for base in cls.__mro__[1:] if name in vars(base)), _GONE)
        if inherited is not _GONE and _watched(namespace[name]) and not _wraps(namespace[name], inherited,
                                                                                  wrapper_codes):
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
    """Whether ``new`` is a library's own wrapper (LIBRARY_WRAPPERS) around what ``old`` is, once
    each is unwrapped through such wrappers: Adam's step and AdamW's (which inherits it) each get
    one, in whichever order the optimizers are first built."""
    return _is_wrapper(new, wrapper_codes) and _innermost(new, wrapper_codes) is _innermost(old, wrapper_codes)


def _is_wrapper(value: Any, wrapper_codes: frozenset[int]) -> bool:
    return type(value) is types.FunctionType and id(value.__code__) in wrapper_codes


def _innermost(value: Any, wrapper_codes: frozenset[int]) -> Any:
    for _ in range(8):
        if not _is_wrapper(value, wrapper_codes):
            break
        value = vars(value).get("__wrapped__")
    return value


def _record_modules(records: list[Any], holders: list[Any]) -> None:
    seen: set[int] = set()
    for module_name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType):
            continue
        try:
            namespace = vars(module)
        except TypeError:
            continue
        _record(records, module_name, namespace, module)
        holders.append(module)
        values = list(namespace.values())
        for value in itertools.compress(values, map(isinstance, values, itertools.repeat(type))):
            if id(value) not in seen and getattr(value, "__module__", None) == module_name:
                seen.add(id(value))
                holders.append(value)
                _record(records, f"{module_name}.{value.__qualname__}", vars(value), value)


def _record(records: list[Any], where: str, namespace: Any, holder: Any) -> None:
    """One namespace: its names, and an itemgetter that returns what they hold as a tuple."""
    names = tuple(name for name, value in list(namespace.items()) if type(name) is str and _watched(value))
    if not names:
        return
    if len(names) == 1:
        names = (names[0], names[0])  # itemgetter of one name returns the value, not a tuple
    records.append((where, namespace, operator.itemgetter(*names), holder, names))


PREFIX = "Not accepted for marks: "
LIBRARY = "~"  # a breach written by library code the learner's code called


def describe(breach: str) -> str:
    """The forbidden record's text for one breach (the parent shows it as the verdict's message)."""
    if breach == "thread":
        what = ("a thread was still running after your function returned (a progress bar's monitor counts: "
                "set tqdm.tqdm.monitor_interval = 0)")
    elif breach.startswith("mode:"):
        what = f"a {breach[5:]} mode your code entered was still active after your function returned"
    elif breach.startswith(LIBRARY):
        what = (f"{breach[len(LIBRARY):]} was replaced while your code ran, by library code it called (torch.compile "
                "and other tools that patch torch as they work cannot be used when grading for marks)")
    else:
        what = f"your code replaced {breach} while grind graded it"
    return (f"{PREFIX}{what}. grind's own checks use the libraries in your process, so changing them (or leaving "
            "a thread that could) would change what they observe. No answer to this exercise needs it: remove "
            "it and submit again.")
