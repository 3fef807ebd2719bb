"""Runtime guards for "from memory" exercises: the learner may not call the built-in it is asked
to write. Stdlib-only, loaded by the child next to runner.py (never imported with torch in the
parent).
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from typing import Any


class ForbiddenAPI(BaseException):
    """Raised by a guarded built-in. A BaseException so a bare ``except Exception`` in the
    submission cannot swallow it; its use is also recorded before it is raised."""


class Guards:
    """Runtime guards on the built-ins an exercise asks the learner to write from memory."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.hits: list[dict[str, Any]] = []
        self.installed: dict[int, str] = {}  # id(guard) -> the dotted name it stands for
        self.originals: dict[int, str] = {}  # id(the real built-in) -> its dotted name
        self.codes: dict[Any, str] = {}  # code objects of the real built-ins (functions, methods)
        self.hook: Any = None

    def check_exports(self, module: types.ModuleType, entry: list[str], source: str) -> None:
        """``Adam = getattr(torch.optim, "Ad" + "am")`` at module level hands the built-in itself to
        the judge's case code, with no learner frame on the stack when it is called. So the
        entry points are checked by identity after loading: a guard, or a class built on one,
        is the forbidden API."""
        known = {**self.originals, **self.installed}
        for name in entry:
            obj = getattr(module, name, None)
            while isinstance(obj, functools.partial):
                obj = obj.func
            obj = getattr(obj, "__func__", obj)  # a bound method
            hit = known.get(id(obj))
            if hit is None and isinstance(obj, type):
                hit = next((known[id(base)] for base in obj.__mro__ if id(base) in known), None)
            if hit is not None:
                line = next((i for i, text in enumerate(source.splitlines(), 1)
                             if text.lstrip().startswith((f"{name} =", f"{name}=", f"class {name}"))), None)
                self.hits.append({"api": hit, "line": line})

    def _call_site(self) -> int | None:
        """The learner's line if learner code is anywhere up the stack, else None.

        The judge's own case code may use a forbidden built-in (a schedule exercise drives the
        learner's function through LambdaLR); only calls made on the learner's behalf trip."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return None

    def make_guard(self, dotted: str, original: Any) -> Any:
        guards = self

        def check() -> None:
            line = guards._call_site()
            if line is not None:
                guards.hits.append({"api": dotted, "line": line})
                raise ForbiddenAPI(f"{dotted} is not allowed in this exercise: write it yourself")

        if not isinstance(original, type):
            def guarded_function(*args: Any, **kwargs: Any) -> Any:
                check()
                return original(*args, **kwargs)

            guarded_function.__name__ = getattr(original, "__name__", dotted)
            guarded_function.__doc__ = getattr(original, "__doc__", None)
            return guarded_function

        plain_new = original.__new__ is object.__new__

        def __new__(cls: Any, *args: Any, **kwargs: Any) -> Any:
            check()
            return object.__new__(cls) if plain_new else original.__new__(cls, *args, **kwargs)

        def __init_subclass__(cls: Any, **kwargs: Any) -> None:
            check()

        # A subclass, so instances the judge's own code creates still are what torch expects.
        return type(original.__name__, (original,), {
            "__new__": __new__, "__init_subclass__": classmethod(__init_subclass__),
            "__module__": original.__module__, "__qualname__": original.__qualname__,
        })

    def install(self, forbidden: list[str]) -> None:
        """Replace each forbidden object everywhere torch exposes it (aliases included), so
        ``getattr(torch.optim, "Ad" + "am")`` and ``torch.optim.adam.Adam`` are caught too."""
        import importlib

        for dotted in forbidden:
            module_name, _, attr = dotted.rpartition(".")
            try:
                owner = importlib.import_module(module_name)
                original = getattr(owner, attr)
            except (ImportError, AttributeError):
                continue
            if id(original) in self.installed or id(original) in self.originals:
                continue  # an alias of a name listed earlier: the first (canonical) name wins
            guard = self.make_guard(dotted, original)
            self.installed[id(guard)] = dotted
            self.originals[id(original)] = dotted
            for code in _code_objects(original):
                self.codes.setdefault(code, dotted)
            for name, module in list(sys.modules.items()):
                if not name.startswith("torch") or module is None:
                    continue
                try:
                    namespace = vars(module)
                except TypeError:
                    continue
                for key, value in list(namespace.items()):
                    if value is original:
                        setattr(module, key, guard)
        self._profile()

    def _profile(self) -> None:
        """The wrappers above can be stepped around (``Guard.__bases__[0]``, a closure cell, a
        ``functools.partial``...), so the real built-ins' own code is watched too: a profile hook
        sees every call, and one into forbidden code with the learner's file up the stack trips."""
        if not self.codes and not self.originals:
            return
        codes, originals, guards = self.codes, self.originals, self

        def hook(frame: Any, event: str, arg: Any) -> None:
            if event == "call":
                dotted = codes.get(frame.f_code)
                start = frame.f_back
            elif event == "c_call":
                dotted = originals.get(id(arg))
                start = frame
            else:
                return
            if dotted is None:
                return
            while start is not None:
                if start.f_code.co_filename == guards.filename:
                    guards.hits.append({"api": dotted, "line": start.f_lineno})
                    raise ForbiddenAPI(f"{dotted} is not allowed in this exercise: write it yourself")
                start = start.f_back

        self.hook = hook
        sys.setprofile(hook)
        threading.setprofile(hook)

    def tampered(self) -> bool:
        """Did the submission remove the profile hook? That is stepping around the guard too."""
        return self.hook is not None and sys.getprofile() is not self.hook


def _code_objects(original: Any) -> list[Any]:
    if isinstance(original, type):
        return [v.__code__ for v in vars(original).values() if hasattr(v, "__code__")]
    code = getattr(original, "__code__", None)
    return [code] if code is not None else []
