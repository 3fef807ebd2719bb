"""Marks runs: the forbidden implementations are absent from the learner's process.

The guards (guards.py) decide "forbidden" by watching who calls what, from state in the
learner's own interpreter, which code that walks frames could in principle switch off. For a
mark that is not enough, so in a marked run the implementations themselves are replaced before
the learner's file loads:

- every Python function that does a forbidden object's work (the function itself, or each
  method a forbidden class defines) gets a new code object that ends the process at once;
- every aten operator named (``torch._fused_adam_``, ``torch.ops.aten._amp_update_scale_``) gets
  a CPU kernel that does the same, through ``torch.library``, so every route to the operator
  (``torch.X``, ``torch._C._VariableFunctions.X``, ``torch.ops.aten.X``, torch's own callers)
  reaches it;
- every 16-bit float dtype named (bf16-rounding's ``torch.float16``, ``torch.bfloat16``) becomes
  absent from the CPU: each aten operator through which a tensor of one can come into existence
  (every operator with a dtype argument: ``empty``, ``_to_copy``, ``view.dtype``, the reductions'
  ``dtype=``...) gets a CPU kernel that ends the process when a 16-bit float is its dtype
  argument, an input or its result, and calls torch's own kernel otherwise. ``x.half()``,
  ``x.type('torch.HalfTensor')``, autocast, ``torch.load``, complex32's parts, a default dtype
  set to one: all end there (``tests/test_marks_poison.py``); and each operator whose name says
  it rounds to one inside its kernel without a 16-bit tensor (``fbgemm_pack_gemm_matrix_fp16``,
  ``quantized::embedding_bag_4bit_prepack``) ends the process when called at all.

"Ends the process" is a line on stderr (``MARKER`` and the API's name) and ``os._exit`` with a
status that names the API (``STATUS_BASE`` plus its index in the exercise's list). The C functions are constants of the poisoned code, not a name
looked up anywhere, so no global, default or module attribute the learner can write changes what
a call does, and no ``except`` catches it. The status is read by grind's own process, which
turns it into a ``forbidden`` verdict: the fact that decides it is taken outside the learner's
process. The original code objects stay only in the guards' own tables (frame walking, the one
way to them, is refused by the marks scan).

What cannot be absent: an object the checks themselves use in the learner's process (lr-schedule's
checks drive the learner's lambda with ``LambdaLR``; such an object keeps only the guards), and
what is neither code nor a dtype. ``not_poisoned`` lists them, and the README says so. A 16-bit
tensor made in C past every operator (``torch.frombuffer``, ``torch.asarray`` over a buffer, a
numpy float16 array) is out of the dispatcher's reach: bf16-rounding names torch's two, whose own
C functions become the exit stub (``_poison_builtin``, as every forbidden C builtin's does), and
``copy_`` into such a tensor ends the process; the marks scan refuses them and numpy's float16
spellings (introspection.py); a spelling built at run time meets the C encoders themselves absent
(``_poison_half_encoders``: CPython's ends the process, numpy's float16 becomes float32's twin);
torch's compilers (NNC, the fusers) are absent (``_poison_compilers``). The checks of such an exercise must not make a
16-bit tensor themselves (bf16-rounding's build their inputs from integers).
"""

from __future__ import annotations

import os
import re
import types
import warnings
from typing import Any

STATUS_BASE = 96  # 96..127: below 128, which bubblewrap uses for "killed by signal N"
STATUS_COUNT = 32
_EXIT, _WRITE = os._exit, os.write  # the C functions, bound when the warm server imports this module
_EXIT_PLACEHOLDER, _WRITE_PLACEHOLDER = 0x6772696E645F, 0x6772696E6457  # int constants swapped for them
MARKER = "grind: a forbidden implementation was called: "  # + the API's name, on stderr, before the exit


def status_name(forbidden: list[str] | tuple[str, ...], code: int | None, stderr: str) -> str | None:
    """The forbidden API a marked run's end names (grind's side), else None: the exit status
    says which, and the poison's line on stderr says it was the poison (a learner's own
    ``os._exit(96)`` is not taken for a forbidden call)."""
    if code is None or not STATUS_BASE <= code < STATUS_BASE + min(STATUS_COUNT, len(forbidden)):
        return None
    name = forbidden[code - STATUS_BASE]
    return name if f"{MARKER}{name}\n" in stderr else None


def _poisoned_code(freevars: tuple[str, ...], status: int, name: str) -> types.CodeType:
    """A code object that takes any arguments, writes the marker line for ``name`` to stderr and
    calls ``os._exit(status)``, with exactly the free variables ``freevars`` (a function's
    ``__code__`` can only be swapped for code with as many as its closure holds)."""
    lines = ["def outer():"]
    lines += [f"    {name} = None" for name in freevars]
    lines.append("    def poisoned(*args, **kwargs):")
    if freevars:
        lines.append("        " + ", ".join(freevars))
    lines.append(f"        ({_WRITE_PLACEHOLDER})(2, {(MARKER + name + chr(10)).encode()!r})")
    lines.append(f"        ({_EXIT_PLACEHOLDER})({status})")
    lines.append("    return poisoned")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "'int' object is not callable": it will not be an int
        outer = compile("\n".join(lines) + "\n", "<grind: forbidden in a marked run>", "exec")
    template = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in template.co_consts if isinstance(c, types.CodeType))
    if inner.co_freevars != freevars:
        raise ValueError(f"free variables {inner.co_freevars} != {freevars}")
    swap = {_EXIT_PLACEHOLDER: _EXIT, _WRITE_PLACEHOLDER: _WRITE}
    consts = tuple(swap.get(c, c) if type(c) is int else c for c in inner.co_consts)
    return inner.replace(co_consts=consts)


def _ender(status: int, api: str, name: str) -> types.FunctionType:
    """A function named ``name`` that takes any arguments and ends the process naming ``api``."""
    return types.FunctionType(_poisoned_code((), status, api), {}, name)


def _used_by_checks(checks: Any) -> set[int]:
    """id() of each object the checks module holds by name: the judge's own use, left alone."""
    try:
        return {id(value) for value in vars(checks).values()}
    except TypeError:
        return set()


def _aten_ops(original: Any) -> list[str]:
    """The aten operator names behind a forbidden object (an operator packet, or a torch builtin
    of the same name), e.g. ``_fused_adam_``."""
    qualified = getattr(original, "_qualified_op_name", None)
    if isinstance(qualified, str) and qualified.startswith("aten::"):
        return [qualified[len("aten::"):]]
    if isinstance(original, types.BuiltinFunctionType) and type(original).__module__ == "builtins":
        return [original.__name__]
    return []


Target = tuple[int, str, Any]  # (index in the exercise's list, dotted name, the object itself)


def resolve(forbidden: list[str], guards: Any) -> list[Target]:
    """The forbidden objects themselves, looked up before the guards put their stand-ins under
    torch's names (an eighth review found the poison had hit the stand-ins, leaving torch's own
    functions one attribute away). One entry per object: the first name listed wins."""
    seen: set[int] = set()
    targets: list[Target] = []
    for index, dotted in enumerate(forbidden[:STATUS_COUNT]):
        original = guards._resolve(dotted)
        if original is None or id(original) in seen:
            continue
        seen.add(id(original))
        targets.append((index, dotted, original))
    return targets


def install(targets: list[Target], checks: Any, torch: Any, guards: Any) -> list[str]:
    """Poison every forbidden implementation that can be, in this process and every process it
    forks, and refuse reading their source files. Returns the names left to the guards alone
    (used by the checks, or neither code nor a dtype). ``guards`` is guards.py (the child loads its siblings by
    path): its notion of "the functions that do an object's work" is the one the guards use."""
    kept = _used_by_checks(checks)
    not_poisoned: list[str] = []
    ops: dict[str, tuple[int, str]] = {}
    dtypes: dict[Any, tuple[int, str]] = {}  # a 16-bit float dtype -> (status, the API that names it)
    sources: dict[str, int] = {}  # a source file's path -> the status of the first API it holds
    for index, dotted, original in targets:
        status = STATUS_BASE + index
        if id(original) in kept:
            not_poisoned.append(dotted)
            continue
        functions = [f for f in guards._functions_of(original) if id(f) not in kept]
        names = _aten_ops(original)
        for name in names:
            ops.setdefault(name, (status, dotted))
        for function in functions:
            sources.setdefault(function.__code__.co_filename, status)
            function.__code__ = _poisoned_code(function.__code__.co_freevars, status, dotted)
        # a C builtin's own C function too: its Python binding need not go through the operator
        # of its name (torch.asarray's does not), and some have none (torch.frombuffer)
        builtin = _poison_builtin(original, status, dotted)
        if _is_half_dtype(original, torch):
            dtypes.setdefault(original, (status, dotted))
        elif not functions and not names and not builtin:
            not_poisoned.append(dotted)
    if dtypes:
        not_poisoned = _install_dtypes(dtypes, not_poisoned, torch)
    if ops:
        _poison_ops(ops, torch)
    if sources:
        _refuse_sources(sources)
    return not_poisoned


# Audit events that would start a program, which could read what this process may not.
_PROGRAMS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"})
_NAMING = frozenset({"open", "os.symlink", "os.link", "os.rename", "shutil.copyfile", "shutil.copytree"})


def _refuse_sources(sources: dict[str, int]) -> None:
    """Refuse, from now on in this process and its forks, opening (or linking, copying, or a
    program that could read) a forbidden implementation's source or compiled file: the poison
    replaces the functions that exist, and an eighth review compiled fresh copies of torch's
    ``adam.py``, ``sgd.py``, ``clip_grad.py`` from disk (a path on ``sys.path``, a loader of its
    own, ``source_to_code`` with another optimisation level). The file is known by its base name,
    which every route to it ends with (a ``dir_fd`` open, a path through ``/proc``, a symlink's
    target), or by its inode (a link of another name made before: none can be made now), and
    its compiled forms in ``__pycache__`` by their prefix. An audit hook cannot be removed; the
    refusal is a PermissionError, which linecache and tracebacks take as "no source"."""
    # A package's __init__.py is known by its inode only: its name is every package's.
    names = frozenset(n for n in map(os.path.basename, sources) if n.endswith(".py") and n != "__init__.py")
    leaves = tuple(name[:-3] + "." for name in names)
    inodes: set[tuple[int, int]] = set()
    for path in sources:
        for candidate in (path, *_compiled(path)):
            try:
                info = os.stat(candidate)
            except OSError:
                continue
            inodes.add((info.st_dev, info.st_ino))
    stat, fspath, basename, error = os.stat, os.fspath, os.path.basename, PermissionError

    def forbidden_file(target: Any) -> bool:
        try:
            text = os.fsdecode(fspath(target))
        except TypeError:
            return False  # a descriptor: opening it again reaches nothing new
        base = basename(text.rstrip("/"))
        if base in names or (base.endswith(".pyc") and base.startswith(leaves)):
            return True
        try:
            info = stat(text)
        except (OSError, ValueError):
            return False
        return (info.st_dev, info.st_ino) in inodes

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in _PROGRAMS:
            raise error("starting a program is not available in a graded run")
        if event in _NAMING and args and any(forbidden_file(a) for a in args[:2] if a is not None):
            raise error("a forbidden implementation's source is not readable in a graded run")

    __import__("sys").addaudithook(hook)
    __import__("linecache").clearcache()


def _compiled(path: str) -> list[str]:
    import importlib.util

    found = []
    for level in ("", 1, 2):
        try:
            found.append(importlib.util.cache_from_source(path, optimization=level))
        except (NotImplementedError, ValueError):
            continue
    return found


_LIBRARIES: list[Any] = []  # the dispatcher's registration objects: the kernels live as long as they do


def _library(torch: Any) -> Any:
    """The dispatcher's own library object, not ``torch.library.Library``: that one hands its
    handle to a ``weakref.finalize`` whose class-wide registry any code can walk and call, and an
    eighth review did, putting torch's fused Adam back before calling it. This object is held only
    here, where the marks scan lets no one reach; one per process, for operators and dtypes alike."""
    if not _LIBRARIES:
        _LIBRARIES.append(torch._C._dispatch_library("IMPL", "aten", "", "<grind: forbidden in a marked run>", 0))
    return _LIBRARIES[0]


def _poison_ops(ops: dict[str, tuple[int, str]], torch: Any) -> None:
    """Register the poison kernels for the operators named (see ``_library`` for which object)."""
    library = _library(torch)
    for name, (status, api) in ops.items():
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        kernel = _ender(status, api, name)
        for overload in packet.overloads():
            target = name if overload == "default" else f"{name}.{overload}"
            for key in ("CPU", "CompositeExplicitAutograd"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": the point
                    try:
                        library.impl(target, key, kernel, False)
                    except RuntimeError:
                        continue  # the dispatcher refused this key for this operator


# Operators that make a tensor of another dtype without a ScalarType argument (complex32 <-> float16).
# Operators with no dtype argument through which a 16-bit float tensor still shows: the complex
# views, and the copies, which round into one that exists (made past every operator: a review
# reached torch.frombuffer through TorchScript's table of builtins and copy_'d into its result).
_DTYPE_VIEWS = ("aten::view_as_real", "aten::view_as_complex", "aten::copy_", "aten::_copy_from",
                "aten::_copy_from_and_resize")
# A "wrapped number" (a Python scalar torch turned into a tensor) reaches a Python kernel as the
# scalar, and the original kernel takes a tensor there: it goes back as a 0-dim tensor of this dtype.
_WRAPPED = {float: "float64", int: "int64", bool: "bool", complex: "complex128"}


def _is_half_dtype(obj: Any, torch: Any) -> bool:
    return isinstance(obj, torch.dtype) and obj in (torch.float16, torch.bfloat16)


# The CPU's backend keys besides CPU itself: a tensor of another layout (``torch._mkldnn``,
# sparse, quantized, nested) dispatches there, and a review made bfloat16 and float16 tensors
# with oneDNN's ``empty`` under MkldnnCPU (``torch.empty(n, dtype=..., layout=torch._mkldnn)``),
# rounded with its ``add`` and read back with ``to_dense(torch.float32)``, past a CPU-only poison.
_BACKEND_KEYS = ("MkldnnCPU", "SparseCPU", "SparseCsrCPU", "QuantizedCPU", "NestedTensorCPU")


def _dtype_operators(torch: Any) -> list[tuple[str, str, tuple[tuple[int, str], ...]]]:
    """(operator, (position, name) of each of its Tensor arguments) for every aten operator through which a tensor
    of a chosen dtype can come into existence on the CPU: each one with a ``ScalarType`` argument
    (``empty``, ``empty_strided``, ``_to_copy``, ``view.dtype``, ``full``, ``arange``, the
    reductions' ``dtype=``, ``from_file``, ...: 150-odd; another namespace's too, ``prims``,
    ``onednn``, ``inductor::_alloc_from_pool``), and the two complex views. Found from the
    schemas, not listed by hand, so a torch that adds one is covered; each with the CPU's backend
    keys it has a kernel of its own under (``_BACKEND_KEYS``). An operator that is
    CompositeImplicitAutograd is left out: it has no kernel of its own, only calls to these (a CPU
    kernel there would also take it away from autograd). Allocation with no dtype given
    (``torch.set_default_dtype``) ends in ``empty``'s or ``empty_strided``'s kernel all the same."""
    C = torch._C
    found = []
    for schema in C._jit_get_all_schemas():
        if "ScalarType" not in str(schema) and schema.name not in _DTYPE_VIEWS:
            continue
        name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        try:
            # aten's composite operators only call others; another namespace's may make the tensor
            # itself (inductor::_alloc_from_pool: a 16-bit view of a uint8 pool, filled by copy_)
            if schema.name.startswith("aten::") and C._dispatch_has_kernel_for_dispatch_key(
                    name, "CompositeImplicitAutograd"):
                continue
            keys = ["CPU"] if C._dispatch_has_computed_kernel_for_dispatch_key(name, "CPU") else []
            keys += [key for key in _BACKEND_KEYS if C._dispatch_has_kernel_for_dispatch_key(name, key)]
        except RuntimeError:
            continue  # a JIT-only schema: no dispatcher operator of that name
        tensors = tuple((i, a.name) for i, a in enumerate(schema.arguments) if str(a.type) == "Tensor")
        found += [(name, key, tensors) for key in keys]
    return found


def _install_dtypes(dtypes: dict[Any, tuple[int, str]], not_poisoned: list[str], torch: Any) -> list[str]:
    """Poison the 16-bit float dtypes named; returns ``not_poisoned`` less the tensor methods
    that cast to one (``x.half()``, ``x.bfloat16()`` make their tensor through these operators)."""
    if torch.float16 in dtypes:  # complex32's two parts are float16: one view_as_real away
        dtypes.setdefault(torch.complex32, dtypes[torch.float16])
    _poison_dtypes(dtypes, torch)
    _poison_rounding_operators(dtypes, torch)
    _poison_compilers(dtypes.get(torch.float16) or dtypes.get(torch.bfloat16), torch)
    if torch.float16 in dtypes:
        _poison_half_encoders(*dtypes[torch.float16])
    return [d for d in not_poisoned if getattr(torch, d.rsplit(".", 1)[-1], None) not in dtypes]


def _poison_dtypes(dtypes: dict[Any, tuple[int, str]], torch: Any) -> None:
    """Make the 16-bit float dtypes absent from the CPU: every operator through which a tensor of
    one can come into existence (``_dtype_operators``) gets a CPU kernel that ends the process,
    naming the dtype, when a dtype argument, a tensor argument or its result is of one, and
    otherwise calls torch's own kernel (kept here, from before, and called with the dispatch keys
    it was given). The routes that make a tensor without the dispatcher (``torch.frombuffer``,
    ``torch.asarray`` over a buffer, ``torch.from_numpy`` of numpy's float16) are the exercise's
    forbidden names and the marks scan's; see the README."""
    libraries = {"aten": _library(torch)}
    enders = {dtype: _ender(status, api, "dtype")
              for dtype, (status, api) in dtypes.items()}
    for name, key, tensors in _dtype_operators(torch):
        namespace = name.partition("::")[0]
        if namespace not in libraries:
            libraries[namespace] = torch._C._dispatch_library("IMPL", namespace, "", "<grind: forbidden in a marked run>", 0)
            _LIBRARIES.append(libraries[namespace])
        library = libraries[namespace]
        original = torch._C._dispatch_get_computed_kernel_for_dispatch_key(name, key)  # a name: MkldnnCPU is not in the enum
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": the point
            try:
                library.impl(name, key, _dtype_kernel(original, tensors, enders, torch), True)
            except RuntimeError:
                continue  # the dispatcher refused this key for this operator


def _dtype_kernel(original: Any, tensors: tuple[tuple[int, str], ...], enders: dict[Any, Any], torch: Any) -> Any:
    """A boxed CPU kernel (keyset first) that ends the process on a 16-bit float, else runs
    ``original``. ``tensors``: where the operator takes a Tensor (a wrapped number arrives there
    as a Python scalar, which ``call_boxed`` would refuse)."""
    dtype_type, tensor_type = torch.dtype, torch.Tensor
    wrapped = {kind: getattr(torch, name) for kind, name in _WRAPPED.items()}
    scalar_tensor = torch.tensor

    def end_if_half(value: Any) -> None:
        kind = type(value)
        ender = enders.get(value) if kind is dtype_type else \
            enders.get(value.dtype) if kind is tensor_type or isinstance(value, tensor_type) else None
        if ender is not None:
            ender()

    def kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        for value in args:
            end_if_half(value)
        for value in kwargs.values():
            end_if_half(value)
        for index, key in tensors:
            if index < len(args) and type(args[index]) in wrapped:
                value = args[index]
                args = (*args[:index], scalar_tensor(value, dtype=wrapped[type(value)]), *args[index + 1:])
            elif type(kwargs.get(key)) in wrapped:
                kwargs[key] = scalar_tensor(kwargs[key], dtype=wrapped[type(kwargs[key])])
        result = original.call_boxed(keyset, *args, **kwargs)
        for value in result if isinstance(result, (tuple, list)) else (result,):
            end_if_half(value)
        return result

    return kernel


# Operators that round to a 16-bit float inside their kernel and hand back no 16-bit tensor (a
# packed fp16 weight, an embedding row's fp16 scale and bias, bfloat16 "quantization"): a hostile
# review of the dtype poison read fp16-rounded values out of fbgemm's fp16 GEMM and out of
# embedding_bag_4bit_prepack's bytes. Matched by name in every namespace: the name says the format.
_ROUNDS_TO = re.compile(r"(?P<bf16>bf16|bfloat16)|(?P<fp16>fp16|half|float16|4bit|2bit)", re.IGNORECASE)
_KERNEL_KEYS = ("CPU", "QuantizedCPU", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
                "CompositeImplicitAutograd")


def _poison_rounding_operators(dtypes: dict[Any, tuple[int, str]], torch: Any) -> None:
    """Every operator whose name says it rounds to a 16-bit float dtype named (``_ROUNDS_TO``)
    ends the process when called at all, naming the dtype (the ``_is_..._supported`` queries
    excepted: they compute nothing)."""
    C = torch._C
    statuses = {"bf16": dtypes.get(torch.bfloat16), "fp16": dtypes.get(torch.float16)}
    libraries: dict[str, Any] = {}
    for name in C._dispatch_get_all_op_names():
        namespace, _, base = name.partition("::")
        found = _ROUNDS_TO.search(base)
        named = statuses[found.lastgroup or ""] if found else None
        if named is None or base.startswith("_is_"):
            continue
        if namespace not in libraries:
            libraries[namespace] = C._dispatch_library("IMPL", namespace, "", "<grind: forbidden in a marked run>", 0)
            _LIBRARIES.append(libraries[namespace])
        kernel = _ender(*named, base)
        keys = [k for k in _KERNEL_KEYS if C._dispatch_has_kernel_for_dispatch_key(name, k)] or ["CPU"]
        for key in keys:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": the point
                try:
                    libraries[namespace].impl(base, key, kernel, False)
                except RuntimeError:
                    continue


# torch's compilers run their own code on a tensor's elements, past the dispatcher: NNC's
# interpreter (``torch._C._te``: a ``Cast`` to ``Dtype.Half`` rounds with c10::Half, into an int16
# output a review read the bits from) and the fusers that hand a TorchScript graph to NNC or
# oneDNN Graph (a fused ``x.half().float()`` never makes a 16-bit tensor). On CPU they are off
# until one of these switches turns them on.
_FUSER_SWITCHES = ("_jit_override_can_fuse_on_cpu", "_jit_override_can_fuse_on_cpu_legacy",
                   "_jit_set_te_must_use_llvm_cpu", "_jit_set_llga_enabled", "_jit_pass_fuse_tensorexprs",
                   "_jit_set_texpr_fuser_enabled")


def _poison_compilers(named: tuple[int, str] | None, torch: Any) -> None:
    """NNC's Python module absent (a stand-in whose every attribute ends the process, in its place
    in ``torch._C`` and ``sys.modules``) and each fuser switch a poisoned function, wherever a
    loaded module holds it."""
    import sys

    if named is None:
        return
    status, api = named
    ender = _ender(status, api, "absent")
    absent = types.ModuleType("torch._C._te", "NNC: absent from a marked run that forbids a 16-bit float dtype")
    vars(absent)["__getattr__"] = ender  # a module's __getattr__: every name it lacks
    swaps: dict[int, Any] = {}
    original = getattr(torch._C, "_te", None)
    if original is not None:
        swaps[id(original)] = absent
    for name in _FUSER_SWITCHES:
        switch = getattr(torch._C, name, None)
        if switch is not None:
            swaps[id(switch)] = _ender(status, api, name)
    if "torch._C._te" in sys.modules:
        sys.modules["torch._C._te"] = absent
    for module in list(sys.modules.values()):
        try:
            namespace = vars(module)
        except TypeError:
            continue
        for key, value in list(namespace.items()):
            if id(value) in swaps:
                namespace[key] = swaps[id(value)]


_PAGE = 4096
_STUBS: list[Any] = []  # the stubs' pages and the scalar type's slot table: they live as long as the process


def _poison_builtin(original: Any, status: int, api: str) -> bool:
    """A forbidden C builtin made absent where it is defined: its ``PyMethodDef``'s C function
    becomes the exit stub, so every object that calls it (torch's name, the guards' original,
    TorchScript's table of builtins, a bound copy) ends the process. Its aten operator, where it
    has one, is poisoned besides: the binding need not go through it (``torch.asarray``'s does
    not), and some have none (``torch.frombuffer``). False where that cannot be done (not a C
    builtin, not x86-64): the name is then the guards' and the scan's alone."""
    import ctypes

    if type(original).__name__ != "builtin_function_or_method" or not _writes_code():
        return False
    definition = ctypes.c_void_p.from_address(id(original) + 16).value  # PyCFunctionObject.m_ml
    if not definition or ctypes.c_char_p.from_address(definition).value != original.__name__.encode():
        return False  # not the layout this was written for
    libc = _libc()
    stub = _exit_stub(libc, (MARKER + api + "\n").encode(), status)
    _write_memory(libc, definition + 8, stub.to_bytes(8, "little"))  # PyMethodDef.ml_meth
    return True


def _writes_code() -> bool:
    """Whether this machine runs the stubs (``_exit_stub``'s x86-64 code)."""
    import platform

    return platform.machine() in ("x86_64", "AMD64")


def _libc() -> Any:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


def _write_memory(libc: Any, address: int, data: bytes) -> None:
    """Write ``data`` at ``address`` whatever its page's protection, and leave that protection as it was."""
    import ctypes

    protection = _protection(address)
    if "w" in protection:
        ctypes.memmove(address, data, len(data))
        return
    start = address & ~(_PAGE - 1)
    length = address + len(data) - start
    keep = (1 if "r" in protection else 0) | (4 if "x" in protection else 0)
    if libc.mprotect(start, length, keep | 2) == 0:
        ctypes.memmove(address, data, len(data))
        libc.mprotect(start, length, keep)
        return
    try:  # a host that refuses writable code pages (W^X): the kernel's own write, past the protection
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            memory.seek(address)
            memory.write(data)
    except OSError as exc:
        raise RuntimeError(f"grind could not write its poison at {address:#x} ({exc.strerror})") from None


def _protection(address: int) -> str:
    """The protection of the mapping that holds ``address`` ("r-xp"...), from /proc/self/maps ("" if none)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, protection = line.split(None, 2)[:2]
            low, high = (int(part, 16) for part in span.split("-"))
            if low <= address < high:
                return protection
    return ""


# Past torch: the IEEE half encoders in C. CPython's (``PyFloat_Pack2``: ``struct``'s ``'e'``,
# ``memoryview``'s from 3.12, ``_testcapi.float_pack``) and numpy's (its float16 dtype: casts,
# item writes, ufunc loops, the ``np.float16`` scalar and its arithmetic) round to nearest even
# exactly as bf16-rounding's float16 half asks, and no hook in the interpreter reaches them.
# The line before the marker when an encoder ends the run: the learner's code called no torch.float16,
# so the verdict's stderr says which rounding it reached.
_ENCODER_NOTE = ("grind: float16 rounding done in C (struct's or memoryview's 'e' format, the np.float16 "
                 "scalar) is absent from a graded run; it counts as the forbidden torch.float16\n")


def _poison_half_encoders(status: int, api: str) -> None:
    """Make every IEEE half encoder in C absent from this process (and every process it forks):
    one that is called ends the process with the marker line and ``status``, as a poisoned
    Python function does.

    - ``PyFloat_Pack2``'s first bytes become a jump to a stub of machine code (write the marker
      to stderr, ``exit_group(status)``), so every caller in CPython, direct or through its
      symbol, reaches the stub;
    - numpy's float16 descriptor (the one object every numpy route to float16 resolves to:
      ``np.dtype('e')``, ``'f2'``, ``np.min_scalar_type(1.0)``, ``Float16DType()``, a ufunc's
      ``dtype=``/``signature=``) becomes a copy of float32's, in place: such a "cast to float16"
      is a cast to float32 and rounds nothing, so an answer built on one is wrong, not forbidden;
    - the ``np.float16`` scalar type's constructor and arithmetic (its number slots and the slot
      wrappers in its namespace, which hold the C functions themselves) jump to the stub.

    Undoing any of it takes writing memory (``ctypes``, ``mmap``), which the marks scan refuses.
    A numpy float16 array alive at this point would be read as float32 past its end: the checks
    of an exercise that forbids a 16-bit dtype make none (bf16-rounding's build from integers).
    Raises RuntimeError where the layouts it relies on are not the ones checked (another machine
    architecture, CPython or numpy): a marked run then ends with that error, never a pass."""
    import ctypes
    import platform

    import numpy as np

    if not _writes_code():
        raise RuntimeError(f"grind cannot remove the float16 encoders on {platform.machine()} for a marked run")
    libc = _libc()
    stub = _exit_stub(libc, (_ENCODER_NOTE + MARKER + api + "\n").encode(), status)
    pack2 = getattr(ctypes.pythonapi, "PyFloat_Pack2", None) or ctypes.pythonapi._PyFloat_Pack2
    entry = ctypes.cast(pack2, ctypes.c_void_p).value
    if not entry:
        raise RuntimeError("grind could not find PyFloat_Pack2")
    _write_memory(libc, entry, b"\x48\xb8" + stub.to_bytes(8, "little") + b"\xff\xe0")  # movabs rax, stub; jmp rax
    _twin_descriptor(ctypes, np.dtype(np.float16), np.dtype(np.float32), np.__version__)
    _stub_scalar_type(ctypes, np.float16, stub)


def _exit_stub(libc: Any, message: bytes, status: int) -> int:
    """The address of x86-64 code that writes ``message`` to fd 2 and calls exit_group(status),
    whatever registers its caller set up, on a page of its own, then made read-and-execute."""
    import ctypes

    tail = (b"\xba" + len(message).to_bytes(4, "little")              # mov edx, len
            + b"\xb8\x01\x00\x00\x00\x0f\x05"                          # mov eax, 1 (write); syscall
            + b"\xbf" + status.to_bytes(4, "little")                      # mov edi, status
            + b"\xb8\xe7\x00\x00\x00\x0f\x05")                         # mov eax, 231 (exit_group); syscall
    code = (b"\xbf\x02\x00\x00\x00"                                     # mov edi, 2
            + b"\x48\x8d\x35" + len(tail).to_bytes(4, "little")         # lea rsi, [rip + len(tail)]: the message
            + tail)
    page = libc.mmap(None, _PAGE, 3, 0x22, -1, 0)  # PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS
    if page in (None, (1 << 64) - 1):  # MAP_FAILED
        raise RuntimeError("grind could not map a page for its poison")
    ctypes.memmove(page, code + message, len(code) + len(message))
    if libc.mprotect(page, _PAGE, 5) != 0:  # PROT_READ|PROT_EXEC
        raise RuntimeError("grind could not make its poison's page executable")
    _STUBS.append(page)
    return int(page)


# numpy's descriptor layouts: (offset of elsize, its C type, the bytes past the object header
# to copy); type_num is an int at 28 in both.
_DESCRIPTORS = {1: (32, "c_int", 96), 2: (40, "c_ssize_t", 120)}


def _twin_descriptor(ctypes: Any, half: Any, single: Any, version: str) -> None:
    """Overwrite numpy's float16 descriptor with float32's fields (type, DType, sizes), in place."""
    major = int(version.split(".")[0])
    if major not in _DESCRIPTORS:
        raise RuntimeError(f"grind does not know numpy {version}'s dtype layout")
    at, kind, end = _DESCRIPTORS[major]
    size = getattr(ctypes, kind)
    seen = [(ctypes.c_int.from_address(id(d) + 28).value, size.from_address(id(d) + at).value) for d in (half, single)]
    if seen != [(half.num, 2), (single.num, 4)]:
        raise RuntimeError(f"grind does not know numpy {version}'s dtype layout ({seen})")
    for owner in (type(single), single.type):  # the twin holds references to both
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(owner))
    ctypes.memmove(id(half) + 8, id(single) + 8, end - 8)
    if half.itemsize != 4 or half.type is not single.type:
        raise RuntimeError("grind could not make numpy's float16 absent")


# CPython's PyTypeObject: tp_basicsize at 32, tp_as_number at 96, tp_richcompare at 200, tp_new at
# 312 (3.8 to 3.13); a slot wrapper's C function (d_wrapped) at 48, its wrapperbase at 40.
_NUMBER_SLOTS = 36


def _stub_scalar_type(ctypes: Any, scalar: type, stub: int) -> None:
    """Point the scalar type's constructor, comparisons and every number slot at the stub."""
    if ctypes.c_ssize_t.from_address(id(scalar) + 32).value != scalar.__basicsize__:
        raise RuntimeError("grind does not know this Python's type layout")
    numbers = (ctypes.c_void_p * _NUMBER_SLOTS)(*([stub] * _NUMBER_SLOTS))
    _STUBS.append(numbers)  # the type points into it from now on
    for offset, value in ((96, ctypes.addressof(numbers)), (200, stub), (312, stub)):
        ctypes.c_void_p.from_address(id(scalar) + offset).value = value
    for name, slot in vars(scalar).items():
        if type(slot).__name__ != "wrapper_descriptor":
            continue
        base = ctypes.c_void_p.from_address(id(slot) + 40).value
        if ctypes.c_char_p.from_address(base).value != name.encode():
            raise RuntimeError(f"grind does not know this Python's slot wrapper layout ({name})")
        ctypes.c_void_p.from_address(id(slot) + 48).value = stub

