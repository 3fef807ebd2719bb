"""A ``torch.save`` file holding a state_dict, read in grind's own process without unpickling.

Why this exists: rank0-checkpoint's facts about the file a learner's job wrote (does it load
with ``weights_only``, are its keys the bare model's, what does it hold) used to be read inside
the learner's ranks, where code that walks frames can rewrite any value before it is reported
(issue 28). grind now keeps the file the case wrote and reads it here, after the run, as
hostile bytes. The project's rule is that the judge never unpickles what it did not make, and a
restricted ``pickle.Unpickler`` still runs pickle's own machine over the bytes; this reader
does not: ``pickletools.genops`` only decodes the opcodes, and a small stack machine of its own
builds what a state_dict may hold (dicts, ordered dicts, tuples, lists, numbers, strings and
tensors rebuilt from storages of plain number types). Every other global, and every opcode it
does not know, makes the file "not a state_dict" (None), which is what ``torch.load(path,
weights_only=True)`` says of a pickled module object.

A tensor is rebuilt with numpy from its storage's bytes, after checking that its offset, sizes
and strides stay inside the storage (``as_strided`` would read past it otherwise), with a cap
on the numbers read. Standard library and numpy only.
"""

from __future__ import annotations

import io
import pickletools
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np

MOST_BYTES = 64 << 20  # the run's per-file limit: no checkpoint of an exercise is larger
# The pickle's own bytes: a state_dict's is a few dozen bytes per tensor (4 MB: 100,000 tensors).
# This machine runs in grind's process, outside every time limit, at about 3 MB a second: a
# 64 MB pickle of one-byte opcodes held grind 20-odd seconds per kept file.
PICKLE_BYTES = 4 << 20

# The storages a state_dict's tensors may use, by the name torch.save pickles for each.
STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
            "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
            "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_}


class NotAStateDict(Exception):
    """The bytes are not a torch.save file of a plain state_dict."""


@dataclass(frozen=True)
class _Global:
    kind: str  # "ordered_dict", "rebuild" or "storage"
    dtype: Any = None


_MARK = object()


def _allowed(module: str, name: str) -> _Global:
    if (module, name) == ("collections", "OrderedDict"):
        return _Global("ordered_dict")
    if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
        return _Global("rebuild")
    if module == "torch" and name in STORAGES:
        return _Global("storage", STORAGES[name])
    raise NotAStateDict(f"{module[:60]}.{name[:60]} is not part of a state_dict")


def _int(value: Any) -> int:
    if type(value) is not int:
        raise NotAStateDict("not a plain tensor")
    return value


def _layout(args: Any) -> tuple[np.ndarray, int, tuple[int, ...], tuple[int, ...]]:
    """The storage, offset, sizes and strides of ``_rebuild_tensor_v2``'s arguments, all plain and
    none negative."""
    if type(args) is not tuple or not 4 <= len(args) <= 7:
        raise NotAStateDict("not a plain tensor")
    values, offset, size, stride = args[0], _int(args[1]), args[2], args[3]
    if type(values) is not np.ndarray or type(size) is not tuple or type(stride) is not tuple or len(size) != len(stride):
        raise NotAStateDict("not a plain tensor")
    shape = tuple(_int(n) for n in size)
    steps = tuple(_int(n) for n in stride)
    if offset < 0 or any(n < 0 for n in shape) or any(n < 0 for n in steps):
        raise NotAStateDict("a tensor with a negative size or stride")
    return values, offset, shape, steps


def _tensor(args: Any, storages: dict[str, np.ndarray], budget: list[int]) -> np.ndarray:
    """``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` as a numpy array,
    refused unless every element it names lies inside the storage."""
    values, offset, shape, steps = _layout(args)
    count = 1
    for n in shape:
        count *= n
    budget[0] -= count
    if budget[0] < 0:
        raise NotAStateDict("more numbers than a checkpoint here holds")
    if not count:
        return np.zeros(shape, dtype=values.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(shape, steps))
    if last >= len(values):
        raise NotAStateDict("a tensor reaches past its storage")
    view = np.lib.stride_tricks.as_strided(values[offset:], shape=shape,
                                           strides=tuple(s * values.itemsize for s in steps), writeable=False)
    return np.array(view)


class _Machine:
    """The stack machine: what each opcode a state_dict's pickle uses does, and nothing else."""

    def __init__(self, archive: zipfile.ZipFile, prefix: str) -> None:
        self.archive, self.prefix = archive, prefix
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}
        self.storages: dict[str, np.ndarray] = {}
        self.budget = [MOST_BYTES]
        # Bytes of every storage together: each is capped, and a zip bomb (a thousand deflated
        # storages of 64 MB each, 65 kB apiece on disk, or entries that overlap) held them all.
        self.bytes_left = MOST_BYTES

    def _pop_mark(self) -> list[Any]:
        items: list[Any] = []
        while True:
            if not self.stack:
                raise NotAStateDict("a pickle without its mark")
            item = self.stack.pop()
            if item is _MARK:
                items.reverse()
                return items
            items.append(item)

    def _storage(self, pid: Any) -> np.ndarray:
        if not (type(pid) is tuple and len(pid) == 5 and pid[0] == "storage" and type(pid[1]) is _Global
                and pid[1].kind == "storage" and type(pid[2]) is str and len(pid[2]) < 64):
            raise NotAStateDict("not a storage")
        if pid[2] not in self.storages:
            name = f"{self.prefix}data/{pid[2]}"
            try:
                info = self.archive.getinfo(name)
            except KeyError:
                raise NotAStateDict("a storage missing from the archive") from None
            if info.file_size > self.bytes_left:
                raise NotAStateDict("storages larger than a checkpoint here")
            self.bytes_left -= info.file_size
            with self.archive.open(info) as handle:
                raw = handle.read(MOST_BYTES + 1)
            dtype = np.dtype(pid[1].dtype)
            if len(raw) > info.file_size or len(raw) % dtype.itemsize:
                raise NotAStateDict("a storage of the wrong length")
            self.storages[pid[2]] = np.frombuffer(raw, dtype=dtype)
        return self.storages[pid[2]]

    def _reduce(self) -> None:
        args, function = self.stack.pop(), self.stack.pop()
        if type(function) is _Global and function.kind == "ordered_dict" and args == ():
            self.stack.append({})
        elif type(function) is _Global and function.kind == "rebuild":
            self.stack.append(_tensor(args, self.storages, self.budget))
        else:
            raise NotAStateDict("a call that is not part of a state_dict")

    def _set_items(self, items: list[Any]) -> None:
        target = self.stack[-1] if self.stack else None
        if type(target) is not dict or len(items) % 2:
            raise NotAStateDict("items set on something that is not a dict")
        for key, value in zip(items[::2], items[1::2]):
            if type(key) not in (str, int):
                raise NotAStateDict("a key that is not a string")
            target[key] = value

    # complexity: one branch per opcode a state_dict's pickle uses, a flat table read top to bottom
    def step(self, name: str, arg: Any) -> bool:
        """Run one opcode; True at STOP."""
        stack = self.stack
        if name in ("PROTO", "FRAME"):
            pass
        elif name == "GLOBAL":
            module, _, attr = str(arg).partition(" ")
            stack.append(_allowed(module, attr))
        elif name in ("BINUNICODE", "SHORT_BINUNICODE", "BININT", "BININT1", "BININT2", "LONG1", "BINFLOAT"):
            stack.append(arg)
        elif name in ("NEWTRUE", "NEWFALSE", "NONE"):
            stack.append({"NEWTRUE": True, "NEWFALSE": False, "NONE": None}[name])
        elif name in ("EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE"):
            stack.append({"EMPTY_DICT": dict, "EMPTY_LIST": list, "EMPTY_TUPLE": tuple}[name]())
        elif name == "MARK":
            stack.append(_MARK)
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            count = int(name[-1])
            if len(stack) < count:
                raise NotAStateDict("a short stack")
            items = tuple(stack[-count:])
            del stack[-count:]
            stack.append(items)
        elif name == "TUPLE":
            stack.append(tuple(self._pop_mark()))
        elif name in ("BINPUT", "LONG_BINPUT", "MEMOIZE"):
            self.memo[len(self.memo) if name == "MEMOIZE" else int(arg)] = stack[-1]
        elif name in ("BINGET", "LONG_BINGET"):
            if arg not in self.memo:
                raise NotAStateDict("a reference to nothing")
            stack.append(self.memo[arg])
        elif name == "BINPERSID":
            stack.append(self._storage(stack.pop()))
        elif name == "REDUCE":
            self._reduce()
        elif name == "SETITEM":
            value, key = stack.pop(), stack.pop()
            self._set_items([key, value])
        elif name == "SETITEMS":
            self._set_items(self._pop_mark())
        elif name in ("APPEND", "APPENDS"):
            added = [stack.pop()] if name == "APPEND" else self._pop_mark()
            if not stack or type(stack[-1]) is not list:
                raise NotAStateDict("items appended to something that is not a list")
            stack[-1].extend(added)
        elif name == "BUILD":
            state = stack.pop()  # an OrderedDict's attributes (a state_dict's _metadata): kept out
            if not stack or type(stack[-1]) is not dict or type(state) is not dict:
                raise NotAStateDict("state set on something that is not a dict")
        elif name == "STOP":
            return True
        else:
            raise NotAStateDict(f"the opcode {name} is not part of a state_dict")
        return False


def read_state_dict(data: bytes) -> dict[Any, Any] | None:
    """The state_dict in the bytes of a torch.save file (tensors as numpy arrays, in the file's
    order), or None when they are anything else: not a zip, several pickles, a global or an
    opcode a state_dict does not use, a tensor outside its storage."""
    if len(data) > MOST_BYTES:
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
            if len(pickles) != 1:
                return None
            info = archive.getinfo(pickles[0])
            if info.file_size > PICKLE_BYTES:
                return None
            with archive.open(info) as handle:
                program = handle.read(PICKLE_BYTES + 1)
            if len(program) > PICKLE_BYTES:
                return None
            machine = _Machine(archive, pickles[0][: -len("data.pkl")])
            for opcode, arg, _ in pickletools.genops(program):
                if machine.step(opcode.name, arg):
                    break
            else:
                return None
            stack = machine.stack
    except (NotAStateDict, zipfile.BadZipFile, ValueError, KeyError, IndexError, TypeError, OverflowError,
            EOFError, OSError, NotImplementedError, RecursionError, MemoryError):
        return None
    return stack[0] if len(stack) == 1 and type(stack[0]) is dict else None
