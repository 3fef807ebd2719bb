"""What a subject's values and exceptions become on the wire: plain numpy arrays (or a refusal),
exact JSON previews of a case's inputs, and an exception reduced to the learner's own frames.

numpy and torch come in as arguments: this module imports neither at load time (the child
imports them in ``job.execute``, under the limits). Exact type checks throughout: a tensor
subclass, a float subclass or an object with a lying ``__eq__`` is refused, never compared.
"""

from __future__ import annotations

import json
import traceback
from typing import Any

PREVIEW_ELEMENTS = 1024  # larger tensors are summarised in a verdict's input
INPUT_NUMBERS = 4096  # an input with more numbers has its long lists summarised
LONG_LIST = 64

# The result is encoded by an encoder of grind's own, made before any learner code exists (see
# ranks._ENCODE: json's shared default encoder is the learner's to change).
ENCODE = json.JSONEncoder().encode


class BadOutput(Exception):
    """The subject produced something that is not plain numeric data."""


def _learner_frames(tb: Any, filename: str) -> list[traceback.FrameSummary]:
    return [f for f in traceback.extract_tb(tb) if f.filename == filename]


def describe_exception(exc: BaseException, filename: str) -> dict[str, Any]:
    """Type, message and the learner's own frames only: the judge's frames are noise to them.
    The exception is the learner's object: if describing it fails, say so instead."""
    try:
        return _describe(exc, filename)
    except BaseException:  # noqa: BLE001 - e.g. an exception whose __str__ raises
        return {"type": "UndescribableException", "message": "the submission raised an exception that could "
                "not be turned into a message", "line": None, "code": "", "traceback": ""}


def _describe(exc: BaseException, filename: str) -> dict[str, Any]:
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return {
            "type": type(exc).__name__,
            "message": str(exc.msg),
            "line": exc.lineno,
            "code": (exc.text or "").strip(),
            "traceback": f'  File "{filename}", line {exc.lineno}\n    {(exc.text or "").strip()}\n',
        }
    frames = _learner_frames(exc.__traceback__, filename)
    last = frames[-1] if frames else None
    if isinstance(exc, SystemExit):
        message = f"the submission called exit({exc.code!r}); return a value instead"
    elif isinstance(exc, MemoryError):
        message = "out of memory" + memory_note()
    elif note := limit_note(exc):
        message = f"{exc} ({note})"
    else:
        message = str(exc)
    return {
        "type": type(exc).__name__,
        "message": message[:2000],
        "line": last.lineno if last else None,
        "code": (last.line or "").strip() if last else "",
        "traceback": "".join(traceback.format_list(frames))[-4000:],
    }


def limit_note(exc: BaseException) -> str:
    """Name the limit an exception comes from, so "Errno 27" reads as the file-size limit."""
    import errno
    import resource

    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "the limit on processes and threads was reached"
    if not isinstance(exc, OSError):
        return ""
    if exc.errno == errno.EAGAIN and isinstance(exc, BlockingIOError):
        return "the limit on processes and threads was reached"
    if exc.errno == errno.EFBIG:
        return f"the file-size limit of {resource.getrlimit(resource.RLIMIT_FSIZE)[0] >> 20} MB was reached"
    if exc.errno == errno.EMFILE:
        return f"the limit of {resource.getrlimit(resource.RLIMIT_NOFILE)[0]} open files was reached"
    return ""


def memory_note() -> str:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return f" (the memory limit is {soft >> 20} MB)" if soft != resource.RLIM_INFINITY else ""


# The functions the conversion below calls, taken before any learner code exists (bind_conversions):
# a seventh review swapped torch.Tensor.detach from a finalizer that ran after the learner's call
# returned and before the conversion, and put it back (a plain write to a class is not an event
# CPython 3.11 audits, so the marks log did not see it).
_CONVERT: dict[str, Any] = {}


def _conversions(np: Any, torch: Any) -> dict[str, Any]:
    return dict(Tensor=torch.Tensor, Parameter=torch.nn.Parameter, detach=torch.Tensor.detach,
                cpu=torch.Tensor.cpu, is_complex=torch.Tensor.is_complex, to=torch.Tensor.to,
                numpy=torch.Tensor.numpy, array=np.array, disable=torch._C.DisableTorchFunctionSubclass,
                bfloat16=torch.bfloat16, float32=torch.float32)


def bind_conversions(np: Any, torch: Any) -> None:
    _CONVERT.update(_conversions(np, torch))


def to_array(value: Any, np: Any, torch: Any) -> Any:
    """Turn one observed value into a plain numpy array, refusing anything that is not data.

    Exact type checks on purpose: a tensor subclass with ``__torch_function__``, a float
    subclass, or an object with a lying ``__eq__`` is rejected here, never compared.
    """
    kind = type(value)
    c = _CONVERT or _conversions(np, torch)
    if kind is c["Tensor"] or kind is c["Parameter"]:
        return _tensor_array(value, c)
    if kind is bool or kind is int or kind is float:
        return _number_array(value, np)
    if kind is np.ndarray or kind in (np.bool_, np.float16, np.float32, np.float64, np.int8, np.int16,
                                      np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        return _numpy_array(value, np)
    if kind is list or kind is tuple:
        return _stacked_array(value, np, torch)
    if value is None:
        raise BadOutput("got None where a value was expected (did you forget to return?)")
    if isinstance(value, torch.Tensor):
        raise BadOutput(f"got a subclass of torch.Tensor ({kind.__name__}); return a plain tensor")
    raise BadOutput(f"got an object of type {kind.__name__} where a number or tensor was expected")


def _tensor_array(value: Any, c: dict[str, Any]) -> Any:
    """A plain tensor's copy, through the functions bound before any learner code existed."""
    with c["disable"]():
        tensor = c["cpu"](c["detach"](value))
        if c["is_complex"](tensor):
            raise BadOutput("got a complex tensor where a real one was expected")
        if tensor.dtype is c["bfloat16"]:
            tensor = c["to"](tensor, c["float32"])
        return c["array"](c["numpy"](tensor), copy=True)


def _number_array(value: Any, np: Any) -> Any:
    array = np.array(value)
    if array.dtype.kind not in "biuf":  # an int too large for any integer dtype
        raise BadOutput(f"got the integer {str(value)[:40]}, too large to be a number here")
    return array


def _numpy_array(value: Any, np: Any) -> Any:
    array = np.array(value, copy=True)
    if array.dtype.kind not in "biuf" or array.dtype.itemsize > 8:  # float128 cannot travel
        raise BadOutput(f"got a numpy array of dtype {array.dtype} where numbers were expected")
    return array


def _stacked_array(value: Any, np: Any, torch: Any) -> Any:
    kinds = set(map(type, value))
    if kinds == {float} or kinds == {bool}:
        # A long run's per-step record (2,100 scales, 2,100 "stepped?"): one conversion instead of
        # three Python calls per entry, each seen by the guard's profile hook. Exact types only,
        # as below, and the very array np.stack of the entries' own arrays gives.
        return np.array(value)
    parts = [to_array(v, np, torch) for v in value]
    try:
        stacked = np.stack(parts) if parts else np.zeros((0,))
    except ValueError:
        raise BadOutput("got a ragged list where a rectangular tensor was expected") from None
    if stacked.dtype.kind not in "biuf":
        raise BadOutput(f"got a list holding {stacked.dtype} values where numbers were expected")
    return stacked


def preview(value: Any, np: Any, torch: Any) -> Any:
    """A JSON-able picture of a case input, for the report (trusted inputs only), whole and
    exact: every number as the shortest decimal that reads back to the same value in its own
    dtype (0.1 in float32 is "0.1", 2**23 is 8388608.0), no list cut short. Only an input of
    more than INPUT_NUMBERS numbers (thousands of steps of a long run) has its long lists
    summarised, and a tensor past PREVIEW_ELEMENTS entries its values: nobody reads those in a
    terminal, and ``grind run --repro`` rebuilds them whole."""
    whole = _preview(value, np, torch, None)
    if _numbers(whole) <= INPUT_NUMBERS:
        return whole
    return _preview(value, np, torch, LONG_LIST)


def _numbers(shown: Any) -> int:
    if isinstance(shown, dict):
        return sum(_numbers(v) for v in shown.values())
    if isinstance(shown, list):
        return sum(_numbers(v) for v in shown)
    return 1


def _preview(value: Any, np: Any, torch: Any, cap: int | None) -> Any:
    if isinstance(value, dict):
        return {str(k): _preview(v, np, torch, cap) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not all(type(v) in (int, float, bool) for v in value):
        if cap is not None and len(value) > cap:
            return f"<{len(value)} items: grind run --repro rebuilds them>"
        return [_preview(v, np, torch, cap) for v in value]
    if isinstance(value, torch.Tensor) and value.requires_grad and value.grad is not None:
        return {"grad": _preview(value.grad, np, torch, cap)}
    if isinstance(value, torch.nn.Module):  # what the module is, and every weight it starts from
        return {"module": " ".join(repr(value).split())[:300],
                "parameters": {name: _preview(p.detach(), np, torch, cap) for name, p in value.named_parameters()}}
    return _preview_value(value, np, torch, cap)


def _preview_value(value: Any, np: Any, torch: Any, cap: int | None) -> Any:
    """One value that is not a container, a graded tensor or a module: as itself, or its numbers."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    try:
        array = to_array(value, np, torch)
    except BadOutput:
        return repr(value)[:80]
    if array.size > (PREVIEW_ELEMENTS if cap is None else cap):
        return f"<{array.dtype} tensor of shape {list(array.shape)}: grind run --repro rebuilds it>"
    return exact_list(array, np)


def exact_list(array: Any, np: Any) -> Any:
    """``array.tolist()`` with each float the shortest decimal that round-trips in the array's
    own dtype (a float32 0.1 is 0.1, not 0.10000000149011612) and non-finite floats spelled out."""
    if array.dtype.kind != "f":
        return array.tolist()
    flat = [_finite_or_text(float(str(v)) if array.dtype != np.float64 else float(v)) for v in array.reshape(-1)]
    if array.ndim == 0:
        return flat[0]
    return np.array(flat, dtype=object).reshape(array.shape).tolist()


def _finite_or_text(value: float) -> Any:
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


def entries_of(case: dict[str, Any], inputs: dict[str, Any]) -> Any:
    """The case's names for the pieces of its flattened observations (its optional "entries"
    function of the fresh inputs), as [label, shape] lists. Trusted code, read before any
    subject touches the inputs."""
    if "entries" not in case:
        return None
    return {str(key): [[str(label), [int(n) for n in shape]] for label, shape in pieces]
            for key, pieces in case["entries"](inputs).items()}


def rank_entries(case: dict[str, Any], entries: Any) -> Any:
    """A distributed case's observations are named per rank ("rank 1: grads"): so are its entries."""
    if not entries or not case.get("world_size"):
        return entries
    return {f"rank {r}: {key}": pieces for r in range(int(case["world_size"])) for key, pieces in entries.items()}
