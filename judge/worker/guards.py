"""Runtime guards for "from memory" exercises: the learner may not call the built-in it is asked
to write. Stdlib-only, loaded by the child next to runner.py (never imported with torch in the
parent).

Two questions, both answered by identity, never by file name (a file name is whatever the
learner passes to ``compile``):

*Is this the forbidden built-in?* Each forbidden object is known by identity: the object itself
(a function, a class, a C builtin) and the code objects of the functions behind it, unwrapped
(``inspect.unwrap``; for a class, every method). A code object that any other function shares is
never registered: torch's decorators share one wrapper code among many functions
(``typing_extensions.deprecated``, an optimizer's ``_use_grad``), and calling an innocent
neighbour of a forbidden function must not trip. A *copy* of a forbidden code object (the module
reloaded with ``importlib.reload``, or its source file exec'd under another name) is known by its
fingerprint (name, bytecode, constants, names, variables) the moment the code is made, and is
forbidden too.

*Is the call made on the learner's behalf?* The judge's own case code may use a forbidden
built-in (lr-schedule drives the learner's function through LambdaLR), so a call trips only
when one of these holds in its thread:

- a learner call is in progress: the runner hands the case code wrapped entry points
  (:meth:`Guards.entry_point`) and loads the learner's module inside :meth:`Guards.learner`;
- it runs in a thread other than the runner's (the judge starts none);
- a frame up the stack runs the learner's code: a code object compiled from the learner's file,
  a function whose globals are the learner's module, or code the learner made while a learner
  call was in progress (exec, ``types.FunctionType``, ``__code__`` assignment: all audited);
- a frame up the stack, the forbidden one included, is a method call on a learner object: an
  instance of a class the learner defined (classes that did not exist before the learner's file
  was loaded) or an object an entry point returned. This is what catches
  ``opt = subject.Adam(...); opt.step()`` when ``step`` is torch's own, stolen onto the class.

Besides the wrappers put in place of the forbidden names, two hooks watch:

- a profile hook (``sys.setprofile``) sees every Python function start and every direct call of
  a C builtin, and trips on forbidden code called on the learner's behalf. Every
  ``threading.Thread`` starts with it in place (and nothing in a thread other than the
  runner's is waved through as the judge's);
- an audit hook (``sys.addaudithook``, which cannot be removed) keeps the profile hook in place:
  CPython announces every attempt to replace it as the "sys.setprofile" event, and the audit
  hook refuses them all. A deliberate attempt from learner code is itself a forbidden call;
  CPython dropping the hook because the hook raised (our ForbiddenAPI, or a RecursionError when
  the learner's recursion reaches the limit inside the hook) is refused with that same
  exception, so the learner sees an honest RecursionError and the hook stays. It also refuses
  ``sys.settrace`` and new audit hooks from learner code (both would run code unwatched or
  rewrite the judge's frames), and records as the learner's any code the learner creates
  (exec, ``types.FunctionType``, ``__code__`` assignment).

This is a deterrent, not a proof: see README.md ("Security model").
"""

from __future__ import annotations

import functools
import gc
import inspect
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

from . import heap  # noqa: F401 - what tests reach through guards (heap.sys, to count its walks)
from .heap import (  # noqa: F401 - freeze_functions: the warm server's, through guards
    _FROZEN_USERS,
    _INDEXED,
    _MRO,
    _TORCH_HOLDERS,
    _addr,
    _builtins_behind,
    _fingerprint,
    _functions_of,
    _is_class,
    _known_classes,
    _near_recursion_limit,
    _resolve,
    _torch_namespaces,
    freeze_functions,
)

_PLAIN = (bool, int, float, complex, str, bytes, type(None), tuple, list, dict)  # values, not objects
_AUDITED = frozenset({"sys.setprofile", "sys.settrace", "sys.addaudithook", "exec", "function.__new__",
                      "object.__setattr__"})
_SETPROFILE = "sys.setprofile (switching off the judge's guard)"
MAX_HITS = 32


class ForbiddenAPI(BaseException):
    """Raised by a guarded built-in. A BaseException so a bare ``except Exception`` in the
    submission cannot swallow it; its use is also recorded before it is raised."""


class _Refused(RuntimeError):
    """The audit hook refusing an operation. A RuntimeError because ``sys.addaudithook`` then
    quietly declines to add the learner's hook instead of raising."""


class Guards:
    """Runtime guards on the built-ins an exercise asks the learner to write from memory."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.hits: list[dict[str, Any]] = []
        self.installed: dict[int, str] = {}  # _addr(guard) -> the dotted name it stands for
        self.originals: dict[int, str] = {}  # _addr(the real object, or a C builtin behind it) -> name
        self.codes: dict[int, str] = {}  # _addr(code object of a real built-in) -> name
        # The same code made again (importlib.reload of a torch module, exec of its source file):
        # bytecode -> {fingerprint -> name}, see _copies_of_forbidden_code.
        self._fingerprints: dict[bytes, dict[tuple[Any, ...], str]] = {}
        self.hook: Any = None
        self.depth = 0  # learner calls in progress in the runner's thread
        self.before_learner: Callable[[], None] | None = None  # run as the judge hands over control
        self.after_learner: Callable[[], None] | None = None  # run when control is back with the judge
        self.watching = False  # the profile hook is meant to be in place
        self._main = threading.get_ident()
        self._keep: list[Any] = []  # everything keyed by _addr() here, kept alive: no key is reused
        self._code_owners: set[int] = set()  # _addr() of the unwrapped forbidden functions
        self._learner_codes: set[int] = set()
        self._file_codes: set[int] = set()  # compiled from the learner's file: the ones with lines
        self._learner_namespaces: set[int] = set()
        self._learner_types: set[int] = set()
        self._learner_objects: dict[int, Any] = {}
        self._known_types: set[int] = set()  # every class that existed before the learner's code
        self._setting: set[int] = set()  # threads in which the guards themselves set the hook
        self._raising: dict[int, BaseException] = {}  # thread -> what the profile hook is raising
        self._import_exec = getattr(getattr(sys.modules.get("_frozen_importlib"), "_call_with_frames_removed", None),
                                    "__code__", None)

    # -----------------------------------------------------------------------------------------
    # Setting up

    def install(self, forbidden: list[str]) -> None:
        """Replace each forbidden object everywhere torch exposes it (aliases included), so
        ``getattr(torch.optim, "Ad" + "am")`` and ``torch.optim.adam.Adam`` are caught too; then
        learn its code objects and start the hooks."""
        replacing: dict[int, tuple[Any, Any]] = {}  # _addr(original) -> (original, its stand-in)
        for dotted in forbidden:
            original = _resolve(dotted)
            if original is None or _addr(original) in self.originals or _addr(original) in self.installed:
                continue  # missing in this torch, or an alias of a name listed earlier: the first wins
            self._register(dotted, original)
            # Functions, C builtins and classes get a stand-in under every torch name. An operator
            # object (torch.ops.aten.X) stays: torch's internals use its attributes, and the
            # profile hook sees the C function it calls.
            if isinstance(original, (type, types.FunctionType, types.BuiltinFunctionType)):
                guard = self.make_guard(dotted, original)
                self._remember(self.installed, guard, self.originals[_addr(original)])
                replacing[_addr(original)] = (original, guard)
        self._replace(replacing)
        self._drop_shared_codes()
        self._learn_fingerprints()
        if not self.codes and not self.originals:
            return
        self._known_types = _known_classes(self._keep)
        self.hook = self._make_hook()
        audit = self._make_audit()
        sys.addaudithook(audit)
        self._keep.append(audit)
        self.watching = True
        self._set_profile(self.hook)
        self._watch_new_threads()

    def _register(self, dotted: str, original: Any) -> None:
        self._remember(self.originals, original, dotted)
        for builtin in _builtins_behind(original):
            if _addr(builtin) not in self.originals:
                self._remember(self.originals, builtin, dotted)
        for function in _functions_of(original):
            self._code_owners.add(_addr(function))
            self._keep.append(function)
            if _addr(function.__code__) not in self.codes:
                self._remember(self.codes, function.__code__, dotted)

    def _remember(self, table: dict[int, str], obj: Any, dotted: str) -> None:
        table[_addr(obj)] = dotted
        self._keep.append(obj)

    def _replace(self, replacing: dict[int, tuple[Any, Any]]) -> None:
        """Put each stand-in wherever a torch module holds its original: one pass over torch's
        thousand-odd module namespaces for all of them (a pass per name cost 11 ms each). In a
        warm job, the server's index (freeze_functions) answers for the modules it saw, and
        only the namespaces made or resized since then are walked. An index entry is used only
        while that name still holds the original, so a stale one replaces nothing wrongly; what
        the index cannot see (trusted code rebinding a torch name to a forbidden object, at the
        same namespace size, between the fork and this call) is still watched by code object.
        When no torch module was imported since the server's index (``heap.torch_imported_since_freeze``)
        the namespaces are not walked at all: only an import adds a namespace or grows one with
        torch's own objects; trusted code adding a name to one without importing anything is, like
        a rebinding, left to the watch by code object."""
        if not replacing:
            return
        for found in replacing.values():
            for module, key in _TORCH_HOLDERS.get(_addr(found[0]), ()):
                if vars(module).get(key) is found[0]:
                    setattr(module, key, found[1])
        if not heap.torch_imported_since_freeze():
            return
        for name, module, namespace in _torch_namespaces():
            indexed = _INDEXED.get(name)
            if indexed is not None and indexed[0] is module and indexed[1] == len(namespace):
                continue
            for key, value in list(namespace.items()):
                pair = replacing.get(_addr(value))
                if pair is not None and value is pair[0]:
                    setattr(module, key, pair[1])

    def _learn_fingerprints(self) -> None:
        """Remember what each forbidden code object *is*, not only which object it is: reloading
        ``torch.optim.rmsprop`` or exec-ing its source file makes new code objects, equal to the
        forbidden ones in everything but identity, and a class built from them is torch's class."""
        for obj in self._keep:
            if type(obj) is types.CodeType and _addr(obj) in self.codes:
                self._fingerprints.setdefault(obj.co_code, {})[_fingerprint(obj)] = self.codes[_addr(obj)]

    def _copies_of_forbidden_code(self, code: Any) -> None:
        """Register as forbidden every code object in ``code`` (nested ones included) that is a
        copy of a forbidden one: the same bytecode, constants, names and variables, whatever the
        function is called (renaming a copy changes nothing it does). Checked for every piece of
        code anyone makes (imports included), before anything else: the bytecode is a cheap
        first filter, so torch's own exec calls cost a dict lookup per code object."""
        if not self._fingerprints:
            return
        todo = [code]
        while todo:
            item = todo.pop()
            todo.extend(c for c in item.co_consts if type(c) is types.CodeType)
            known = self._fingerprints.get(item.co_code)
            if known is None or _addr(item) in self.codes:
                continue
            dotted = known.get(_fingerprint(item))
            if dotted is not None:
                self._remember(self.codes, item, dotted)

    def _drop_shared_codes(self) -> None:
        """Forget any code object that a function other than a forbidden one also runs: it is a
        decorator's wrapper or a factory's closure, and tripping on it would accuse innocent
        callers. One pass over the heap, before any learner code exists."""
        if not self.codes:
            return
        for code in list(self.codes):  # functions frozen by the warm server before this fork
            if any(_addr(function) not in self._code_owners for function in _FROZEN_USERS.get(code, ())):
                del self.codes[code]
        for obj in gc.get_objects():  # every other function (all of them in a cold run)
            if type(obj) is types.FunctionType and _addr(obj.__code__) in self.codes and _addr(obj) not in self._code_owners:
                del self.codes[_addr(obj.__code__)]

    def make_guard(self, dotted: str, original: Any) -> Any:
        """A stand-in for the forbidden name: the real object for the judge's own code, a
        ForbiddenAPI on the learner's behalf."""
        guards = self

        def check() -> None:
            guards._check(dotted, sys._getframe(2))

        if not isinstance(original, type):
            def guarded_function(*args: Any, **kwargs: Any) -> Any:
                check()
                return original(*args, **kwargs)

            guarded_function.__name__ = getattr(original, "__name__", dotted)
            guarded_function.__doc__ = getattr(original, "__doc__", None)
            return guarded_function

        plain_new = original.__new__ is object.__new__  # type: ignore[comparison-overlap]  # a class's own, or object's

        def __new__(cls: Any, *args: Any, **kwargs: Any) -> Any:
            check()
            return object.__new__(cls) if plain_new else original.__new__(cls, *args, **kwargs)

        def __init_subclass__(cls: Any, /, **kwargs: Any) -> None:
            check()

        # A subclass, so instances the judge's own code creates still are what torch expects.
        return type(original.__name__, (original,), {
            "__new__": __new__, "__init_subclass__": classmethod(__init_subclass__),
            "__module__": original.__module__, "__qualname__": original.__qualname__,
        })

    # -----------------------------------------------------------------------------------------
    # What the learner brings: its code, its classes, its entry points

    def adopt_code(self, code: Any, from_file: bool = False) -> None:
        """Record a code object (and every one nested in it) as the learner's."""
        todo = [code]
        while todo:
            item = todo.pop()
            if _addr(item) in self._learner_codes:
                continue
            self._learner_codes.add(_addr(item))
            self._keep.append(item)
            if from_file:
                self._file_codes.add(_addr(item))
            todo.extend(c for c in item.co_consts if type(c) is types.CodeType)

    def adopt_namespace(self, namespace: dict[str, Any]) -> None:
        """The learner's module globals: any function running with them is the learner's."""
        self._learner_namespaces.add(_addr(namespace))
        self._keep.append(namespace)

    def adopt_classes(self, namespace: dict[str, Any]) -> None:
        """Classes the learner's file defined (any class that did not exist before it ran)."""
        for value in list(namespace.values()):
            if _is_class(value):
                self._adopt_class(value)

    def _adopt_class(self, cls: Any) -> None:
        if self._known_types and _addr(cls) not in self._known_types and _addr(cls) not in self._learner_types:
            self._learner_types.add(_addr(cls))
            self._keep.append(cls)

    def adopt(self, value: Any) -> None:
        """What an entry call returned is the learner's object: a method called on it later by
        the case code (``opt.step()``) is a call on the learner's behalf."""
        for item in (value, *(value if type(value) in (tuple, list) else ())):
            kind = type(item)
            if any(kind is plain for plain in _PLAIN):
                continue
            if _addr(kind) not in self._known_types:
                self._adopt_class(kind)
            elif _addr(item) not in self._learner_objects:
                self._learner_objects[_addr(item)] = item  # kept alive: keys are never reused
            if _is_class(item):
                self._adopt_class(item)

    def enter(self) -> None:
        """A learner call starts (the hook is put back first if it was lost)."""
        self.depth += 1
        if self.watching and sys.getprofile() is not self.hook:
            self._set_profile(self.hook)

    def leave(self) -> None:
        self.depth -= 1

    @contextmanager
    def learner(self) -> Iterator[None]:
        """Everything inside runs on the learner's behalf (loading the learner's module)."""
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def entry_point(self, target: Callable[..., Any]) -> Callable[..., Any]:
        """The callable the case code gets in place of the learner's entry point: the same call,
        marked as the learner's, whatever the entry point is (a partial, a class built from
        torch's, code compiled under another file name)."""
        guards = self

        def learner_entry(*args: Any, **kwargs: Any) -> Any:
            if guards.before_learner is not None and guards.depth == 0:
                guards.before_learner()
            guards.enter()
            try:
                result = target(*args, **kwargs)
            finally:
                guards.leave()
                if guards.after_learner is not None and guards.depth == 0:
                    guards.after_learner()  # marks: what the call changed, before the judge reads on
            guards.adopt(result)
            return result

        return learner_entry

    def check_exports(self, module: types.ModuleType, entry: list[str], source: str) -> None:
        """``Adam = getattr(torch.optim, "Ad" + "am")`` at module level hands the built-in itself to
        the judge's case code. So the entry points are checked by identity after loading: a
        guard, a real built-in, a class built on one or holding its methods, a partial (of
        ``operator.call`` too) or bound method around one, is the forbidden API. Call it inside
        :meth:`learner`: looking at the learner's objects may run the learner's code."""
        if not self.originals:
            return  # nothing is forbidden in this exercise
        for name in entry:
            hit = self._forbidden_in(getattr(module, name, None))
            if hit is not None:
                line = next((i for i, text in enumerate(source.splitlines(), 1)
                             if text.lstrip().startswith((f"{name} =", f"{name}=", f"class {name}"))), None)
                self._hit(hit, line)

    def _forbidden_in(self, obj: Any) -> str | None:
        known = {**self.originals, **self.installed}
        todo, seen, looked_at = [obj], set[int](), []
        while todo and len(seen) < 256:
            item = todo.pop()
            if _addr(item) in seen:
                continue
            seen.add(_addr(item))
            looked_at.append(item)  # alive until the end, so no key in seen is reused
            if _addr(item) in known:
                return known[_addr(item)]
            if isinstance(item, functools.partial):
                todo += [item.func, *item.args, *item.keywords.values()]
            elif isinstance(item, (types.MethodType, staticmethod, classmethod)):
                todo += [item.__func__, getattr(item, "__self__", None)]
            elif isinstance(item, property):
                todo += [item.fget, item.fset, item.fdel]
            elif isinstance(item, types.FunctionType):
                if _addr(item.__code__) in self.codes:  # torch's code, whoever's function object
                    return self.codes[_addr(item.__code__)]
                todo.append(getattr(item, "__wrapped__", None))  # a decorator's wrapper: what it wraps
            elif _is_class(item):
                for cls in _MRO(item):
                    if _addr(cls) in known:
                        return known[_addr(cls)]
                    if _addr(cls) not in self._known_types:  # the learner's own: look at its methods
                        todo += list(vars(cls).values())
        return None

    # -----------------------------------------------------------------------------------------
    # Deciding

    def _check(self, dotted: str, frame: Any) -> None:
        """Record and refuse a call of forbidden ``dotted`` made at ``frame`` for the learner."""
        if self._on_learner_behalf(frame):
            self._hit(dotted, self._learner_line(frame))
            raise ForbiddenAPI(f"{dotted} is not allowed in this exercise: write it yourself")

    def _hit(self, api: str, line: int | None) -> None:
        """Record a forbidden call once per place (a loop must not grow the result without end)."""
        hit = {"api": api, "line": line}
        if hit not in self.hits and len(self.hits) < MAX_HITS:
            self.hits.append(hit)

    def _on_learner_behalf(self, frame: Any) -> bool:
        if self.depth > 0 or threading.get_ident() != self._main:
            return True
        while frame is not None:
            if self._learner_frame(frame) or self._learner_self(frame):
                return True
            frame = frame.f_back
        return False

    def _learner_frame(self, frame: Any) -> bool:
        return _addr(frame.f_code) in self._learner_codes or _addr(frame.f_globals) in self._learner_namespaces

    def _learner_self(self, frame: Any) -> bool:
        """Is this frame a method call on a learner object (its first argument)?"""
        code = frame.f_code
        if code.co_argcount:
            value = frame.f_locals.get(code.co_varnames[0])
        elif code.co_flags & inspect.CO_VARARGS:
            rest = frame.f_locals.get(code.co_varnames[code.co_kwonlyargcount])
            value = rest[0] if type(rest) is tuple and rest else None
        else:
            return False
        if _addr(value) in self._learner_objects:
            return True
        kind = type(value)
        classes = _MRO(value) if any(c is type for c in _MRO(kind)) else _MRO(kind)  # a classmethod's cls
        return any(_addr(c) in self._learner_types for c in classes)

    def _learner_line(self, frame: Any) -> int | None:
        """The line of the learner's file closest to the call, if any frame runs that file."""
        while frame is not None:
            if _addr(frame.f_code) in self._file_codes or (frame.f_code.co_filename == self.filename
                                                         and self._learner_frame(frame)):
                return int(frame.f_lineno)
            frame = frame.f_back
        return None

    # -----------------------------------------------------------------------------------------
    # The hooks

    def _make_hook(self) -> Callable[[Any, str, Any], None]:
        """The profile hook: every Python function start ("call") and every direct call of a C
        builtin ("c_call"). It has to be cheap: two dict lookups in the common case."""
        codes, originals, check, raising = self.codes, self.originals, self._check, self._raising
        get_ident = threading.get_ident

        def hook(frame: Any, event: str, arg: Any) -> None:
            if event == "call":
                dotted = codes.get(_addr(frame.f_code))
            elif event == "c_call":
                dotted = originals.get(_addr(arg))
            else:
                return
            if dotted is None:
                return
            try:
                check(dotted, frame)
            except BaseException as exc:
                # CPython now drops the hook ("sys.setprofile" event): the audit hook refuses
                # with this same exception, so the hook stays and the caller sees this.
                raising[get_ident()] = exc
                raise

        return hook

    def _make_audit(self) -> Callable[[str, tuple[Any, ...]], None]:
        on_audit = self._on_audit

        def audit(event: str, args: tuple[Any, ...]) -> None:
            if event in _AUDITED:
                try:
                    frame = sys._getframe(1)
                except ValueError:  # raised from C with no Python frame above (a thread's start)
                    frame = None
                on_audit(event, args, frame)

        return audit

    def _on_audit(self, event: str, args: tuple[Any, ...], frame: Any) -> None:
        """``frame`` is the Python frame that raised the event (the caller of the C function)."""
        ident = threading.get_ident()
        if ident in self._setting:
            return
        if event == "sys.setprofile":
            self._on_setprofile(ident, frame)
        elif event == "sys.settrace":
            # A trace function could rewrite the judge's frames (jumps, f_locals): refused.
            if self._on_learner_behalf(frame):
                raise _Refused("sys.settrace is not available while the judge runs your code")
        elif event == "sys.addaudithook":
            # A learner's audit hook would run with profiling off, unwatched: quietly not added.
            if self._on_learner_behalf(frame):
                raise _Refused("audit hooks cannot be added while the judge runs your code")
        elif event in ("exec", "function.__new__"):
            self._on_new_code(args[0] if args else None, frame)
        elif len(args) == 3 and type(args[1]) is str and args[1] == "__code__":  # object.__setattr__
            self._on_new_code(args[2], frame)

    def _on_setprofile(self, ident: int, frame: Any) -> None:
        """Every replacement of the profile hook is refused; only the reason differs."""
        pending = self._raising.pop(ident, None)
        if pending is not None:
            raise pending  # CPython dropping the hook because it raised: keep it, same exception
        if _near_recursion_limit():
            # The hook could not even start (the learner's recursion is at the limit), so
            # CPython drops it: that is the learner's RecursionError, not a forbidden call.
            raise RecursionError("maximum recursion depth exceeded")
        if self._on_learner_behalf(frame):
            self._hit(_SETPROFILE, self._learner_line(frame))
            raise ForbiddenAPI(f"{_SETPROFILE} is not allowed in this exercise")
        raise _Refused("the judge's profile hook cannot be replaced")

    def _on_new_code(self, code: Any, frame: Any) -> None:
        """Code the learner makes (exec, ``types.FunctionType``, ``f.__code__ = ...``) while a
        learner call runs, in a learner thread, or directly from learner code, is the learner's,
        wherever it is later called from; torch modules imported meanwhile are not. No walk up
        the stack here: torch itself compiles and runs code thousands of times per run."""
        if type(code) is not types.CodeType or _addr(code) in self._learner_codes:
            return
        self._copies_of_forbidden_code(code)
        if frame is not None and frame.f_code is self._import_exec:
            return
        if (self.depth > 0 or threading.get_ident() != self._main
                or (frame is not None and self._learner_frame(frame))):
            self.adopt_code(code)

    def _set_profile(self, hook: Any) -> None:
        ident = threading.get_ident()
        self._setting.add(ident)
        try:
            sys.setprofile(hook)
        finally:
            self._setting.discard(ident)

    def _watch_new_threads(self) -> None:
        """Every threading.Thread starts with the hook in place. Not ``threading.setprofile``: the
        learner could clear that setting (a plain module global, unaudited) before starting one."""
        guards = self
        bootstrap = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

        def _bootstrap_inner(thread: threading.Thread) -> None:
            if guards.watching:
                guards._set_profile(guards.hook)
            bootstrap(thread)

        threading.Thread._bootstrap_inner = _bootstrap_inner  # type: ignore[attr-defined]

    def stop_watching(self) -> None:
        """Switch the profile hook off (the learner's speed is timed without its overhead). The
        audit hook stays, as it must."""
        if self.hook is None:
            return
        self.watching = False
        self._set_profile(None)
