"""A static check, made in grind's own process, for code that reaches into the judge's.

Why: the forbidden-API guards run in the learner's interpreter (they must: they watch what the
learner's code calls), so code that walks the judge's frames or objects (``sys._getframe``,
``gc.get_objects``, ``ctypes``, a function's ``__closure__``) can switch them off before it calls
``torch.nn.utils.clip_grad_norm_``. For self-practice that cheats only the learner; for marks
(``grind grade``, the Gradescope bundle) it would be a forged pass. No runtime check inside the
child can settle it, so the marking modes read the source here, where no submission can reach,
and refuse a submission that uses any of these doors (with the computed-name ones, on an
exercise with forbidden APIs). No answer to these exercises needs them; a refusal says which
construct, on which line. The figures that decide the distributed exercises' verdicts are
counted outside the process anyway (judge/witnessed.py); this keeps the in-process ones (a
forbidden call seen by the guard, a checkpoint readable when a rank returned) honest for marks.

What it cannot see: a door opened through text that is only assembled at run time. That is why
the dynamic ways to reach a module or an attribute by a computed name (``__import__``,
``importlib``, ``getattr`` with a name that is not a literal, ``exec``/``eval``/``compile``) are
doors too: text cannot become code, or a module, without one of them.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import re
from collections.abc import Callable
from typing import Any

# Modules whose import alone opens a door into the interpreter's frames, objects or memory.
MODULES = frozenset({"gc", "ctypes", "_ctypes", "cffi", "inspect", "traceback", "code", "codeop", "runpy", "timeit",
                     "cProfile", "profile", "pdb", "bdb", "trace", "importlib", "builtins", "_thread",
                     "multiprocessing", "operator",
                     # grind's own modules in the child: the checks (their captured functions and
                     # state), the author kit and the child package itself (its conversions, the
                     # guards); no answer imports them
                     "grind_checks", "grind_kit", "grind_worker",
                     # a file written through shared memory: no write(2), so no count (see above)
                     "mmap",
                     # handlers receive the interrupted frame
                     "signal",
                     # a library that replaces attributes on the learner's behalf, and puts them
                     # back: written by a library frame, for the child's check (integrity.py)
                     "unittest", "mock",
                     # text turned into an object by its dotted name, or run as an expression (a
                     # seventh review reached gc and torch's own functions through pydoc.locate)
                     "pydoc", "pkgutil", "doctest"})
# Modules that turn bytes into calls (an unpickled payload can call anything it names): doors on
# an exercise with forbidden APIs; elsewhere saving state with pickle is an ordinary style.
DYNAMIC_MODULES = frozenset({"pickle", "_pickle", "marshal", "copyreg", "shelve", "dill", "cloudpickle"})
# Attributes that walk frames, closures and code objects.
ATTRIBUTES = frozenset({"_getframe", "_current_frames", "settrace", "setprofile", "f_back", "f_locals",
                        "f_globals", "f_builtins", "f_code", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
                        "__closure__", "__code__", "__globals__", "__builtins__", "__subclasses__",
                        "__wrapped__", "get_referrers", "get_objects", "__dict__", "__class__", "__base__",
                        "__bases__", "__mro__", "__getattribute__", "__reduce__", "__reduce_ex__",
                        "last_traceback", "__traceback__",
                        "setprofile_all_threads", "settrace_all_threads", "ctypeslib", "sharedctypes",
                        "attrgetter", "methodcaller",
                        # a module's attribute set or removed by the dunder itself (torch.__setattr__)
                        "__setattr__", "__delattr__",
                        # bytes written to a file past write(2), which the witness counts (a
                        # red team wrote four checkpoints through mmap and was counted as one)
                        "memmap", "from_file", "splice", "vmsplice", "open_memmap", "mmap_mode",
                        # an attribute by computed name without getattr, and frames handed out
                        "Formatter", "get_field", "currentframe", "_getframemodulename",
                        # text into an object or an expression: a dotted name resolved
                        # (pkgutil.resolve_name, torch's own _import_dotted_name, pydoc.locate),
                        # annotations evaluated (typing.get_type_hints, ForwardRef), a logging
                        # config's "()" factories (logging.config)
                        "locate", "resolve_name", "_import_dotted_name", "get_type_hints", "ForwardRef",
                        "_eval_type", "__annotations__", "dictConfig", "fileConfig", "_resolve",
                        # bytes into calls past the pickle modules: torch.load's full unpickler,
                        # numpy's pickled arrays
                        "pickle_module", "allow_pickle",
                        # an attribute copied by a name given as text (functools' assigned=)
                        "update_wrapper", "WRAPPER_ASSIGNMENTS", "assigned", "updated",
                        # a fresh copy of a module's code, or a module (builtins) from a function:
                        # an eighth review compiled torch's own files again (poison.py refuses
                        # reading them in the child; this says so before anything runs)
                        "source_to_code", "meta_path", "path_hooks", "path_importer_cache", "__spec__",
                        "__loader__", "__self__",
                        # the finalizers of everything alive, and a dispatcher operator by name
                        "_registry", "_jit_get_operation",
                        # the dispatcher's own tables: a kernel registered over the poison's, torch's
                        # kernel fetched or called under another dispatch key, a dtype's tensor
                        # made with no storage behind it (worker/poison.py)
                        "DispatchKey", "DispatchKeySet", "_dispatch_library", "Library", "call_boxed",
                        "redispatch", "redispatch_boxed", "_op_dk", "fallthrough_kernel",
                        "_DisableTorchDispatch", "_make_wrapper_subclass",
                        # torch's own functions by operator name, past the stand-ins the guards put
                        # under torch's names (TorchScript's table of builtins), and the switch that
                        # turns every __torch_function__ mode off (a check's watch is one)
                        "_builtin_ops", "_builtin_table", "_get_builtin_table", "_find_builtin",
                        "DisableTorchFunction", "DisableTorchFunctionSubclass",
                        # an object, a storage or a tensor over a raw address: a write anywhere in
                        # the process (a third review rewrote a tensor's dtype field in memory,
                        # past every operator, and passed bf16-rounding for marks)
                        "_cdata", "_set_cdata", "_new_with_weak_ptr", "_construct_storage_from_data_pointer",
                        "_tensor_impl_raw_handle", "_swap_tensor_impl", "_rebuild_wrapper_subclass",
                        "_unsafe_reset_storage", "_new_using_fd_cpu", "_new_using_filename_cpu",
                        "_new_shared_fd_cpu", "_new_shared_filename_cpu", "_set_from_file"})
# Builtins that turn text into code, or a computed name into a module or an attribute: any use of
# the name is a door (``run = exec`` is as good as a call), not only a call.
NAMES = frozenset({"exec", "eval", "compile", "__import__", "breakpoint", "globals", "vars", "locals", "getattr",
                   "setattr", "delattr", "__builtins__", "__loader__", "__spec__"})
# A door module reached as another module's attribute needs no import (torch.functional's own
# ``inspect``: ``torch.functional.inspect.stack()`` hands out frames). The names that are also
# ordinary attributes (``torch.jit.trace``, ``torch.profiler.profile``, ``torch.multiprocessing``,
# a Linear's ``code``) stay out; their modules' doors are spelled by name (``interact``) or walk
# frames by an attribute listed above.
ORDINARY_ATTRIBUTES = frozenset({"code", "trace", "profile", "operator", "multiprocessing", "signal"})
# Attributes that are doors only on the sys module (``model.modules()`` is an ordinary call).
SYS_ATTRIBUTES = frozenset({"modules", "exception", "exc_info", "last_traceback", "last_exc", "monitoring",
                            "_getframe", "settrace", "setprofile", "_current_frames"})


@dataclasses.dataclass(frozen=True)
class _Scan:
    """What every door check of one source needs to know about it, computed once."""

    dynamic: bool
    modules: frozenset[str]  # modules whose import is a door here
    module_attributes: frozenset[str]  # door modules reached as another module's attribute
    calls_of: set[int]  # ids of the nodes called (``f`` in ``f()``)
    docstrings: set[int]  # ids of strings standing alone as statements
    imported: dict[str, str]  # name an import binds -> the dotted module (or from-module)
    sys_names: set[str]  # names that hold the sys module
    parents: dict[int, ast.AST]


def reaches_into_judge(source: str, dynamic: bool = True) -> list[tuple[str, int]]:
    """Each (construct, line) in ``source`` that could reach the judge's frames or objects, in
    line order. ``dynamic`` adds the doors that are ordinary styles elsewhere: ``getattr(obj,
    name)`` with any computed name, and pickling modules. An exercise with forbidden APIs refuses
    them too, since they reach torch's implementation as well as the judge's; elsewhere a computed
    ``getattr`` over a model's parameter names is ordinary, and only one on a ``sys``-like module
    or with a name built from pieces is a door.
    ``source`` must compile (the caller checked).

    Each node goes to the one checker of its type (``_CHECKS``); the table is read in order and
    the first type that matches decides, as one chain of ``elif`` would."""
    tree = ast.parse(source)
    scan = _scan(tree, dynamic)
    found = _rebinds_a_module(tree, _import_bindings(tree))
    found += _sys_as_value(tree, scan)
    for node in ast.walk(tree):
        for kind, check in _CHECKS:
            if isinstance(node, kind):
                found += check(node, scan)
                break
    return sorted(set(found), key=lambda item: (item[1], item[0]))


def _scan(tree: ast.AST, dynamic: bool) -> _Scan:
    modules = MODULES | DYNAMIC_MODULES if dynamic else MODULES
    # names bound by imports: a computed attribute of a module (getattr(sys, "_get" + "frame")) is
    # a door on every exercise, whatever an object's computed attribute is
    imported = {(a.asname or a.name).split(".")[0]: (a.name if isinstance(node, ast.Import) else node.module or "")
                for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    return _Scan(dynamic=dynamic, modules=modules, module_attributes=modules - ORDINARY_ATTRIBUTES,
                 calls_of={id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)},
                 # a string standing alone as a statement (a docstring) does nothing: its words are no door
                 docstrings={id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)},
                 imported=imported, sys_names=_sys_names(tree, imported), parents=_parents(tree))


def _import_bindings(tree: ast.AST) -> dict[str, str]:
    """Name an absolute import binds -> the dotted name it stands for (``import torch.nn`` binds
    ``torch`` to ``torch``; ``import torch.nn as nn`` binds ``nn`` to ``torch.nn``; ``from torch
    import nn`` binds ``nn`` to ``torch.nn``). Relative imports bind nothing here."""
    bindings: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                whole = a.asname or "." not in a.name
                bindings[(a.asname or a.name).split(".")[0]] = a.name if whole else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not (node.level or not node.module):
            for a in node.names:
                bindings[(a.asname or a.name).split(".")[0]] = f"{node.module}.{a.name}"
    return bindings


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _sys_names(tree: ast.AST, imported: dict[str, str]) -> set[str]:
    """Names that hold the sys module: its imports, and aliases of them (y = sys; y = os.sys)."""
    sys_names = {name for name, dotted in imported.items() if dotted == "sys"} | {"sys"}
    while True:
        more = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and (_reaches_sys(node.value, sys_names) or isinstance(node.value, ast.Attribute)
                     and node.value.attr == "sys") for t in node.targets if isinstance(t, ast.Name)} - sys_names
        if not more:
            return sys_names
        sys_names |= more


def _sys_as_value(tree: ast.AST, scan: _Scan) -> list[tuple[str, int]]:
    """A name holding sys, loaded other than as the base of an attribute or an alias's value."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scan.sys_names):
            continue
        parent = scan.parents.get(id(node))
        if not (isinstance(parent, ast.Attribute) and parent.value is node) and not isinstance(parent, ast.Assign):
            found.append((f"{node.id} (the sys module) used as a value", node.lineno))
    return found


def _check_import(node: ast.Import, scan: _Scan) -> list[tuple[str, int]]:
    return [(f"import {a.name}", node.lineno) for a in node.names if a.name.split(".")[0] in scan.modules]


def _check_import_from(node: ast.ImportFrom, scan: _Scan) -> list[tuple[str, int]]:
    if not node.module:
        return []
    if node.module.split(".")[0] in scan.modules or (node.module == "sys" and any(
            a.name in ATTRIBUTES | SYS_ATTRIBUTES for a in node.names)):
        return [(f"from {node.module} import {', '.join(a.name for a in node.names)}", node.lineno)]
    # a door imported by name from elsewhere: from os import sys, from numpy import memmap
    return [(f"from {node.module} import {a.name}", node.lineno) for a in node.names
            if a.name in ATTRIBUTES | {"sys"} | scan.modules]


def _check_class_pattern(node: ast.MatchClass, scan: _Scan) -> list[tuple[str, int]]:
    """case FrameType(f_back=up): an attribute read by a pattern."""
    return [(f"{attr}= in a class pattern", node.lineno) for attr in node.kwd_attrs
            if attr in ATTRIBUTES or attr in scan.module_attributes]


def _check_keyword(node: ast.keyword, scan: _Scan) -> list[tuple[str, int]]:
    line = getattr(node, "lineno", 0) or 0
    if scan.dynamic and node.arg == "weights_only" and not (
            isinstance(node.value, ast.Constant) and node.value.value is True):
        return [("weights_only= other than True", line)]  # torch.load's unpickler
    if node.arg in ATTRIBUTES:
        return [(f"{node.arg}=", line)]  # np.load(..., mmap_mode="r+")
    return []


def _check_attribute(node: ast.Attribute, scan: _Scan) -> list[tuple[str, int]]:
    # sys.modules however sys is reached: an alias (import sys as s), another module's own
    # reference to it (os.sys, torch.serialization.sys)
    if (node.attr in ATTRIBUTES or node.attr in scan.module_attributes
            or (node.attr in SYS_ATTRIBUTES and _reaches_sys(node.value, scan.sys_names))
            or (node.attr == "sys" and _root(node.value) in scan.imported)
            or (node.attr == "modules" and id(node) not in scan.calls_of
                and not _package_path(node, scan.parents))):
        return [(f".{node.attr}", node.lineno)]
    return []


def _check_call(node: ast.Call, scan: _Scan) -> list[tuple[str, int]]:
    """getattr/setattr/delattr called: a door unless the name is a literal, ordinary one, or (where
    no API is forbidden) a computed name on an object that is not a system module."""
    if not (isinstance(node.func, ast.Name) and node.func.id in _ACCESSORS):
        return []
    name = node.args[1] if len(node.args) >= 2 else None
    if isinstance(name, ast.Constant) and isinstance(name.value, str) and _harmless(name.value):  # _literal_name
        return []  # getattr(model, "weight"): a literal, ordinary name
    target = scan.imported.get(_root(node.args[0]) or "", "") if node.args else ""
    built = len(node.args) >= 2 and not isinstance(node.args[1], (ast.Constant, ast.Name))
    if not scan.dynamic and not _literal_name(node) and target.split(".")[0] not in _SYSTEM and not built:
        return []  # getattr(model, name): an ordinary style where no API is forbidden (see above)
    return [(f"{node.func.id}() with that name", node.lineno)]


def _check_name(node: ast.Name, scan: _Scan) -> list[tuple[str, int]]:
    if node.id in NAMES and node.id not in _ACCESSORS:
        return [(node.id, node.lineno)]
    if node.id in _ACCESSORS and id(node) not in scan.calls_of:
        return [(f"{node.id} passed around", node.lineno)]
    return []


def _check_constant(node: ast.Constant, scan: _Scan) -> list[tuple[str, int]]:
    if (isinstance(node.value, (str, bytes)) and id(node) not in scan.docstrings
            and not _harmless(node.value if isinstance(node.value, str) else node.value.decode("latin-1"))):
        return [(f"the text {node.value!r}"[:60], node.lineno)]
    return []


# Node type -> its door check, in the order of the decision (one checker per node).
_CHECKS: tuple[tuple[type[ast.AST], Callable[[Any, _Scan], list[tuple[str, int]]]], ...] = (
    (ast.Import, _check_import), (ast.ImportFrom, _check_import_from), (ast.MatchClass, _check_class_pattern),
    (ast.keyword, _check_keyword), (ast.Attribute, _check_attribute), (ast.Call, _check_call),
    (ast.Name, _check_name), (ast.Constant, _check_constant))


class _ModuleNames:
    """The names that hold a module, and the dotted module a name or attribute chain names."""

    def __init__(self, imported: dict[str, str]) -> None:
        self.imported = imported
        self.modules = {name for name, dotted in imported.items() if _names_a_module(dotted)}

    def module_of(self, node: ast.AST) -> str | None:
        """The dotted module ``node`` (a Name or an attribute chain) names, or None."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.modules:
            return None
        dotted = ".".join([self.imported.get(node.id, node.id), *reversed(parts)])
        return dotted if not parts or _names_a_module(dotted) else None

    def follow_aliases(self, tree: ast.AST) -> None:
        """Aliases of aliases: ``s = torch.serialization`` makes ``s`` a module too."""
        while True:
            aliases = [alias for node in ast.walk(tree) if (alias := _alias(node)) is not None]
            more = {name for name, value in aliases if self.module_of(value) is not None} - self.modules
            if not more:
                return
            for name, value in aliases:
                if name in more:
                    self.imported[name] = self.module_of(value) or name
            self.modules |= more


def _alias(node: ast.AST) -> tuple[str, ast.expr] | None:
    """``name = <expression>`` (one plain name as the only target): the name and the expression."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    return None


def _library_names(tree: ast.AST, imported: dict[str, str]) -> set[str]:
    """What an import binds, and names given a chain rooted in one (M = torch.nn.Module): changing
    an attribute of any of them changes a library's module or class for the checks too."""
    library = set(imported)
    while True:
        more = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and _chain(node.value)
                and _root(node.value) in library for target in node.targets if isinstance(target, ast.Name)} - library
        if not more:
            return library
        library |= more


def _rebinds_a_module(tree: ast.AST, imported: dict[str, str]) -> list[tuple[str, int]]:
    """Monkeypatching, by plain assignment or by handing a module to code that assigns:
    ``torch.load = mine``, ``del torch.save``, ``serialization._load = mine``, ``patch(torch)``,
    ``patch(torch.serialization)``, ``for m in [torch.serialization]: m._load = mine``,
    ``type(model).state_dict = mine``. A check's own code calls library functions after the
    learner's returns (rank0-checkpoint loads the file with ``torch.load``), so rebinding one
    rewrites what it observes without any frame walk: two red-team reviews passed wrong answers
    that way. No answer needs to change a module, so the rule is strict and simple: a module
    (a name an import binds to one, or an attribute chain that names one: grind looks for the
    submodule's file without importing anything) may only be the base of an attribute read
    (``torch.serialization.load(...)``). Storing, passing, returning, iterating or assigning
    to it is refused; a plain alias (``F = torch.nn.functional``) is followed, not refused. An
    object's own attributes (``p.grad = None``, ``model.weight = ...``) stay free."""
    names = _ModuleNames(imported)
    parents = _parents(tree)
    names.follow_aliases(tree)
    library = _library_names(tree, imported)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(parents.get(id(node)), ast.ClassDef) \
                and names.module_of(node.value) is not None:
            found.append((f"the module {ast.unparse(node.value)} kept in a class", node.lineno))
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found += _changes_a_module(node, names, library, parents)
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
                and not _module_read_allowed(node, parents.get(id(node))) and names.module_of(node) is not None:
            found.append((f"the module {ast.unparse(node)} used as a value", node.lineno))
    return found


def _changes_a_module(node: ast.Attribute, names: _ModuleNames, library: set[str],
                      parents: dict[int, ast.AST]) -> list[tuple[str, int]]:
    """An attribute stored or deleted: refused on a module, a library name, or a class by type(x)."""
    if _sets_a_flag(node, parents):
        return []  # torch.backends.cudnn.deterministic = True: a setting, no code (see below)
    if names.module_of(node.value) is not None or _root(node.value) in library:
        return [(f"changing {ast.unparse(node)}", node.lineno)]
    if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id == "type":
        return [(f"changing {ast.unparse(node)}", node.lineno)]  # a class, reached by type(x)
    return []


def _module_read_allowed(node: ast.AST, parent: ast.AST | None) -> bool:
    """The uses of a module that are no door: the base of an attribute read, a plain alias's
    value (followed), the object of getattr/hasattr (judged by the getattr rules)."""
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return True  # torch.serialization.load: an attribute read of the module
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Name):
        return True  # an alias, followed above
    return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and bool(parent.args)
            and parent.args[0] is node and parent.func.id in ("getattr", "hasattr"))  # getattr(nn, "LayerNorm")


def _sets_a_flag(node: ast.Attribute, parents: dict[int, ast.AST]) -> bool:
    """``torch.backends.cudnn.deterministic = True``: a plain assignment of a literal number,
    string, boolean or None, which learners write to make runs reproducible (a red-team review
    found it refused). A literal holds no code, so it cannot stand in for a function the checks
    call; the child's own check of the libraries (judge/worker/integrity.py) ignores such
    values too."""
    parent = parents.get(id(node))
    return (isinstance(node.ctx, ast.Store) and isinstance(parent, ast.Assign) and parent.targets == [node]
            and isinstance(parent.value, ast.Constant) and not isinstance(parent.value.value, bytes))


@functools.lru_cache(maxsize=512)
def _names_a_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module: a top-level one importlib can find (without importing
    it), then each part a file or package beside it. Attributes that are not modules (a
    function, ``torch.float32``) answer False."""
    import importlib.machinery
    import importlib.util
    import sys

    top, *rest = dotted.split(".")
    if top in sys.builtin_module_names:
        return not rest
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    folders = list(spec.submodule_search_locations or [])
    for index, part in enumerate(rest):
        found = None
        for folder in folders:
            base = os.path.join(folder, part)
            if os.path.isfile(os.path.join(base, "__init__.py")):
                found = [base]
                break
            if any(os.path.isfile(base + suffix) for suffix in importlib.machinery.all_suffixes()):
                found = [] if index < len(rest) - 1 else [base]
                break
        if found is None:
            return False
        folders = found
    return True


def _reaches_sys(node: ast.AST, sys_names: set[str]) -> bool:
    """Whether ``node`` is the sys module: a name that holds it (``sys``, ``import sys as s``,
    ``y = sys``) or any module's own reference to it (``os.sys``, ``p.sys``)."""
    if isinstance(node, ast.Name):
        return node.id in sys_names
    return isinstance(node, ast.Attribute) and node.attr == "sys"


def _package_path(node: ast.Attribute, parents: dict[int, ast.AST]) -> bool:
    """``nn.modules.batchnorm``: torch's package named ``modules``, read through (``sys.modules``
    is subscripted or called on, never followed by a submodule's name)."""
    parent = parents.get(id(node))
    return isinstance(parent, ast.Attribute) and parent.value is node and parent.attr not in (
        "get", "items", "values", "keys", "copy", "pop", "setdefault", "__getitem__", "__contains__")


def _chain(node: ast.AST) -> bool:
    """A bare name or an attribute chain (``torch``, ``torch.serialization``), nothing computed."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


_ACCESSORS = ("getattr", "setattr", "delattr")
# The modules whose attributes, reached by a computed name, are doors (sys._getframe and kin)
_SYSTEM = frozenset({"sys", "builtins", "os", "posix", "signal", "resource", "threading", "_thread", "io", "_io"})


def _root(node: ast.AST | None) -> str | None:
    """The name an attribute chain starts from (``torch.nn.functional`` -> ``torch``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


# Names that stay doors in any text: the modules through which a word becomes a builtin, a module
# or an object (``getattr(builtins, word)``, ``pydoc.locate(word)``), and the ones that reach
# memory and objects directly.
_GATEWAYS = frozenset({"builtins", "__builtins__", "importlib", "__import__", "ctypes", "_ctypes", "gc", "pydoc",
                       "pkgutil"})


def _harmless(text: str) -> bool:
    """A string that names none of the doors: a door's name written as text is how a computed
    attribute reaches it (``attrgetter("_getframe")``, ``getattr(e, "__traceback__")``). The
    names of builtins and modules ("eval", "compile", "inspect", "signal") are ordinary words
    (a history key "eval", an error message), and text becomes a builtin or a module only through
    a gateway, which is refused by name wherever it is written; so only attribute names and the
    gateways are doors in text (two reviews found a key "eval" and an assert message refused)."""
    words = set(re.split(r"[^A-Za-z0-9_]+", text))
    return not (words & (ATTRIBUTES | SYS_ATTRIBUTES | _GATEWAYS) - {"modules", "exception"})


def _literal_name(call: ast.Call) -> bool:
    return len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)


def names_a_forbidden_api(source: str, forbidden: tuple[str, ...], entry: tuple[str, ...] = ()) -> list[tuple[str, int]]:
    """Each (construct, line) that names a forbidden API by its last name, however it was reached:
    ``clip_grad.clip_grad_norm_``, ``_optim = torch.optim; _optim.Adam``, ``from x import Adam``,
    ``getattr(m, "Adam")``. The practice check follows import aliases to the full dotted name;
    for marks the name alone is enough, since the guards in the process can be led around (a
    sixth review had a finalizer call ``clip_grad_norm_`` after the learner's call returned, with
    no learner frame on the stack, after reaching it through a module alias the dotted check did
    not follow). An answer written from memory has no reason to spell these names, except as the
    names of its own entry points (``type("AdamW", (Adam,), ...)``)."""
    leaves = {dotted.rsplit(".", 1)[-1]: dotted for dotted in forbidden}
    tree = ast.parse(source)
    found = _numpy_half_spellings(tree) if _HALF_LEAVES & set(leaves) else []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in leaves and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append((f".{node.attr} ({leaves[node.attr]})", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            found += [(f"import of {a.name} ({leaves[a.name]})", node.lineno) for a in node.names if a.name in leaves]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in leaves \
                and node.value not in entry:
            found.append((f"the text {node.value!r} ({leaves[node.value]})", node.lineno))
    return sorted(set(found), key=lambda item: (item[1], item[0]))


# A 16-bit float dtype forbidden (bf16-rounding): numpy's float16 casts round the same way, and
# numpy is outside torch's dispatcher, where the marks poison cannot reach (worker/poison.py).
# ``np.float16``/``np.half`` and the texts 'float16'/'half' are leaves already; these are numpy's
# other spellings of its float16 dtype, as a string field: 'e', 'f2', '<f2', '2e', 'f2,i4' (and
# struct's: below).
_HALF_LEAVES = frozenset({"float16", "half", "bfloat16"})
_HALF_TEXT = re.compile(r"[@=<>!|]?\s*(\(\s*\d+(\s*,\s*\d+)*\s*,?\s*\)|\d+)?\s*[<>=|]?(e|f2|float16|half|bfloat16)")
# Python's struct packs IEEE half precision too ('<4e'): a struct format with a byte order, a count
# or a placeholder ('<%de') and an 'e' among its codes (a plain word such as "feed" is left alone).
_STRUCT_HALF = re.compile(r"(?=.*e)(?=^[@=<>!]|.*(\d|%d|\{\}))[@=<>!]?(\s*(\d+|%d|\{\})?[xcbB?hHiIlLqQnNefdspP])+")


# torch's settings that let a float32 matmul or convolution round its inputs to a 16-bit float
# (oneDNN on a CPU with bfloat16 instructions, cuBLAS): torch's rounding, with no 16-bit tensor.
_REDUCED_PRECISION = frozenset({"fp32_precision", "set_float32_matmul_precision",
                                "allow_bf16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction",
                                # the C setters behind them, and the setting as a keyword
                                # (torch.backends.mkldnn.flags(fp32_precision="bf16"))
                                "_set_fp32_precision_setter", "_set_float32_matmul_precision"})


def _numpy_half_spellings(tree: ast.AST) -> list[tuple[str, int]]:
    """Each string (not a docstring, not an f-string's format spec such as ``{x:e}``) one of whose
    comma-separated fields spells numpy's float16 dtype, and each reduced-precision setting."""
    skip = {id(c) for node in ast.walk(tree) if isinstance(node, ast.FormattedValue) and node.format_spec
            for c in ast.walk(node.format_spec)}
    skip |= {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    found = [(f"the text {node.value!r} (a float16 format, numpy's or struct's)", node.lineno) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and id(node) not in skip and _spells_half(node.value)]
    found += [(f".{node.attr} (a float32 operation rounded to 16 bits)", node.lineno)
              for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr in _REDUCED_PRECISION]
    found += [(f"{node.arg}= (a float32 operation rounded to 16 bits)", node.lineno)
              for node in ast.walk(tree) if isinstance(node, ast.keyword) and node.arg in _REDUCED_PRECISION]
    return found + _registers_a_kernel(tree)


# torch.library registers a kernel of one's own over an operator's, the dtype poison's included:
# no answer needs it, and without it the poison's kernels are the ones the CPU runs.
_REGISTRATION = frozenset({"library", "_library", "impl", "register_kernel", "custom_op", "register_fake",
                           "register_autograd", "register_torch_dispatch"})


def _registers_a_kernel(tree: ast.AST) -> list[tuple[str, int]]:
    found = [(f".{node.attr} (a kernel registered over torch's)", node.lineno) for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr in _REGISTRATION]
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, (ast.Import, ast.ImportFrom)) else []
        module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
        if any(part in _REGISTRATION for name in [*names, module] for part in name.split(".")):
            found.append(("an import of torch.library (a kernel registered over torch's)", getattr(node, "lineno", 0)))
    return found


def _spells_half(value: object) -> bool:
    return isinstance(value, str) and (any(_HALF_TEXT.fullmatch(field.strip()) for field in value.split(","))
                                       or _STRUCT_HALF.fullmatch(value.strip()) is not None)


def refusal(source: str, forbids_apis: bool, forbidden: tuple[str, ...] = (),
            entry: tuple[str, ...] = ()) -> tuple[str, int] | None:
    """The message and line for a marked submission that opens a door, or None."""
    named = names_a_forbidden_api(source, forbidden, entry)
    if named:
        what, line = named[0]
        return (f"Not accepted for marks: {what} at line {line} names an API this exercise asks you to write "
                "yourself. Remove it and submit again.", line)
    uses = reaches_into_judge(source, dynamic=forbids_apis)
    if not uses:
        return None
    what, line = uses[0]
    more = f" (and {len(uses) - 1} more)" if len(uses) > 1 else ""
    return (f"Not accepted for marks: {what} at line {line}{more} can reach into grind's own code in your "
            "process and rewrite what its checks observe there. No answer to this exercise needs it: "
            "remove it and submit again.", line)
