"""Cases for rank0-checkpoint: every case runs on real gloo ranks (``world_size``), laid out in
nodes the way torchrun lays them out (global rank = node * ranks per node + local rank).

Each rank builds the same small model, wraps it in DistributedDataParallel, runs one forward
pass (so a BatchNorm's running statistics hold something), is told its local rank (the argument,
and the variables torchrun sets: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK), and
calls the subject with a path in a fresh folder of the run's private temp directory (its working
directory). Every rank
holds the same weights, so whichever rank writes, the file's bytes are the same: what tells the
mistakes apart is who wrote, when the file was there and what it holds. Observed on every rank:

- ``torch.save calls``: how many times this rank called ``torch.save`` during the subject's call.
  ``torch.save`` is wrapped here, when the checks load (before the learner's file, so a
  ``from torch import save`` in it gets the wrapper too).
- ``readable at return``: 1 when, the moment the subject returned on this rank, the path held a
  finished checkpoint (a regular file ending with the zip archive's end record, which
  ``torch.save`` writes last) with the very bytes every rank finds there at the end, else 0. It is read with the system calls themselves, taken when
  these checks load, before the learner's file: a submission that rebinds ``torch.load`` or
  ``torch.serialization``'s helpers by plain assignment (a red-team review did, and a rank that
  never waited passed) changes nothing here. Without a barrier this
  is a race that a loaded machine could win either way; the wrapper makes it deterministic: a
  save waits, before it writes, until every other rank has returned, is saving too, or waits in
  a collective that cannot complete without this rank (each rank says which in a marker file).
  So a rank that returns without waiting for the writer never finds the file, however the ranks
  are scheduled, and a barrier before the save is caught as surely as none. With a barrier after
  the save the wait ends as soon as the other ranks reach it (``WAIT_S`` caps it for code that
  waits some other way).
- ``loads with weights_only``: 1 when, once every rank has returned, the file reads as a
  state_dict and nothing else (tensors of plain number types in ordered dicts: what
  ``torch.load(path, weights_only=True)`` accepts of one; a pickled module object is not), else
  0. It is read by these checks' own reader (``_StateDictReader``), not ``torch.load``, whose
  allow-list the learner's code can change in its process;
- ``bare keys``: 1 when the file's keys are exactly the bare model's ``state_dict`` keys (no
  ``module.`` prefix, buffers included), else 0;
- ``saved state``: the file's values in the bare model's key order, read by every rank after
  every rank has returned (NaN where a key is missing, or everywhere when the file does not read
  as a state_dict).
"""

import collections
import functools
import hashlib
import inspect
import io
import math
import os
import pickle
import shutil
import stat
import tempfile
import time
import zipfile

import numpy

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d
from torch.nn.parallel import DistributedDataParallel

from grind_kit import case

# init_sync appeared in torch 2.1; older versions broadcast at construction (a larger baseline).
SYNC_OFF = {"init_sync": False} if "init_sync" in inspect.signature(DistributedDataParallel.__init__).parameters else {}
# The longest a save waits for the other ranks to settle (see the module's docstring): longer
# than gloo's timeout, so that a rank told to sleep instead of waiting in a collective wakes up
# and returns first (and finds no file); shorter than the exercise's time_limit.
WAIT_S = 12.0
# The collectives a rank may wait in while rank 0 writes (a barrier, or one used as one).
WAITS = ("barrier", "monitored_barrier", "all_reduce", "broadcast", "broadcast_object_list", "all_gather",
         "all_gather_object", "gather", "gather_object", "scatter", "scatter_object_list", "reduce", "recv")


# The C functions themselves, bound before the learner's file loads (see "readable at return").
_OPEN, _READ, _CLOSE, _FSTAT, _IS_FILE = os.open, os.read, os.close, os.fstat, stat.S_ISREG
_SHA256 = hashlib.sha256
_READ_ONLY = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_END_RECORD = b"PK\x05\x06"  # a zip's end-of-central-directory record: 22 bytes, the file's last
_MOST = 64 << 20  # the run's file-size limit: no checkpoint here is larger


def _finished(path):
    """The digest of the file at ``path`` when it is a regular file that ends with a zip's end
    record (no comment), which a completed ``torch.save`` leaves and a file still being written
    does not; else None. "readable at return" compares it with the digest of the file every rank
    reads at the end: a rank that found some other finished zip there (a third red team wrote
    an empty zip's 22 bytes at the path, and rank 0's save then replaced them) did not find
    the checkpoint."""
    try:
        fd = _OPEN(path, _READ_ONLY)
    except OSError:
        return None
    try:
        info = _FSTAT(fd)
        if not _IS_FILE(info.st_mode) or not 22 <= info.st_size <= _MOST:
            return None
        digest, data = _SHA256(), b""
        while True:
            chunk = _READ(fd, 1 << 20)
            if not chunk:
                break
            digest.update(chunk)
            data = (data + chunk)[-22:]
    except OSError:
        return None
    finally:
        _CLOSE(fd)
    if len(data) != 22 or data[:4] != _END_RECORD or data[20:] != b"\0\0":
        return None
    return digest.digest()


class _Watch:
    """This rank's part in the case while the subject's call runs (``folder`` is None outside it)."""

    folder = None
    rank = 0
    world = 1
    saves = 0
    collectives = 0  # entered during the call, counted once each (not the ones they make inside)
    depth = 0


_watch = _Watch()


def _post(state):
    """Say where this rank is, in its marker file (replaced atomically, so a peer reads one word)."""
    if _watch.folder is None:
        return
    mine = os.path.join(_watch.folder, f"rank{_watch.rank}")
    with open(mine + ".tmp", "w") as handle:
        handle.write(state)
    os.replace(mine + ".tmp", mine)


def _peers_settled():
    """Whether every other rank has returned, is saving too, or waits in a collective that cannot
    complete before this rank joins it. Ranks meet in collectives in the same order, so a peer in
    its k-th collective waits for this rank's k-th: when this rank has entered k or more, the
    peer's collective has completed (or is completing) and its marker is only not updated yet."""
    for rank in range(_watch.world):
        if rank == _watch.rank:
            continue
        try:
            with open(os.path.join(_watch.folder, f"rank{rank}")) as handle:
                state = handle.read().split()
        except OSError:
            return False
        if state[:1] == ["collective"]:
            if int(state[1]) <= _watch.collectives:
                return False
        elif state[:1] not in (["returned"], ["saving"]):
            return False
    return True


_torch_save = torch.serialization.save


def _watched_save(obj, f, *args, **kwargs):
    if _watch.folder is None:
        return _torch_save(obj, f, *args, **kwargs)
    _watch.saves += 1
    _post("saving")
    deadline = time.monotonic() + WAIT_S
    while not _peers_settled() and time.monotonic() < deadline:
        time.sleep(0.002)
    try:
        return _torch_save(obj, f, *args, **kwargs)
    finally:
        _post("running")


# torch.save's name and docstring, without functools.wraps's __wrapped__ (a way around the count)
_watched_save.__name__, _watched_save.__qualname__ = _torch_save.__name__, _torch_save.__qualname__
_watched_save.__doc__, _watched_save.__module__ = _torch_save.__doc__, _torch_save.__module__


class _Pending:
    """What ``async_op=True`` returns, wrapped: the rank waits in the collective when it calls
    ``wait()`` (``dist.barrier(async_op=True).wait()`` is a barrier), not when it issues it."""

    def __init__(self, work, number):
        self._work, self._number = work, number

    def wait(self, *args, **kwargs):
        if _watch.folder is not None:
            _post(f"collective {self._number}")
        try:
            return self._work.wait(*args, **kwargs)
        finally:
            if _watch.folder is not None:
                _post("running")

    def __getattr__(self, name):
        return getattr(self._work, name)


def _watched_collective(function):
    @functools.wraps(function)
    def collective(*args, **kwargs):
        if _watch.folder is None or _watch.depth:  # broadcast_object_list's own broadcasts: one collective
            return function(*args, **kwargs)
        _watch.collectives += 1
        number = _watch.collectives
        _watch.depth += 1
        if not kwargs.get("async_op"):
            _post(f"collective {number}")
        try:
            work = function(*args, **kwargs)
        finally:
            _watch.depth -= 1
            _post("running")
        return _Pending(work, number) if kwargs.get("async_op") and work is not None else work
    return collective


torch.save = torch.serialization.save = _watched_save
for _name in WAITS:
    _original = getattr(distributed_c10d, _name, None)
    if _original is None:
        continue
    _wrapped = _watched_collective(_original)
    for _module in (dist, distributed_c10d):
        if getattr(_module, _name, None) is _original:
            setattr(_module, _name, _wrapped)


class TwoLayers(torch.nn.Module):
    """Nested modules and buffers: a Linear, then a BatchNorm1d with its running statistics."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(3, 2)
        self.norm = torch.nn.BatchNorm1d(2)

    def forward(self, x):
        return self.norm(self.body(x))


class Large(torch.nn.Module):
    """The witnessed case's model: about 4 MB of state, so that writing the checkpoint once more
    dwarfs every other file the run writes (grind counts the run's writes from outside)."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(LARGE, LARGE)
        self.norm = torch.nn.BatchNorm1d(LARGE)

    def forward(self, x):
        return self.norm(self.body(x))


LARGE = 1024


def build(model):
    """The model of a case, the same on every rank."""
    if model == "large":
        torch.manual_seed(11)
        return Large(), torch.randn(4, LARGE)
    if model == "example":
        net = torch.nn.Linear(2, 1)
        with torch.no_grad():
            net.weight.copy_(torch.tensor([[0.5, -1.5]]))
            net.bias.copy_(torch.tensor([0.25]))
        return net, torch.tensor([[1.0, 2.0]])
    torch.manual_seed(7)
    net = TwoLayers()
    return net, torch.randn(4, 3)


# Each model's state_dict keys and shapes, taken now, before the learner's file loads: the model a
# case hands the learner is the learner's to change (an instance's own state_dict, a state_dict
# hook, a global module hook a red team registered at import), so what the file should hold is
# never asked of it after the call.
EXPECTED = {name: {key: value.detach().clone() for key, value in build(name)[0].state_dict().items()}
            for name in ("example", "two_layers", "large")}


# The storages a state_dict's tensors may use, by the name torch.save pickles for each.
_STORAGES = {"FloatStorage": numpy.float32, "DoubleStorage": numpy.float64, "HalfStorage": numpy.float16,
             "LongStorage": numpy.int64, "IntStorage": numpy.int32, "ShortStorage": numpy.int16,
             "CharStorage": numpy.int8, "ByteStorage": numpy.uint8, "BoolStorage": numpy.bool_}


class _Storage:
    def __init__(self, dtype):
        self.dtype = dtype


def _rebuild(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
    """torch._utils._rebuild_tensor_v2's arguments, rebuilt as a tensor from plain bytes."""
    values, dtype = storage
    if not isinstance(values, numpy.ndarray) or not all(type(n) is int for n in (offset, *size, *stride)):
        raise pickle.UnpicklingError("not a plain tensor")
    array = numpy.lib.stride_tricks.as_strided(values[offset:], shape=tuple(size),
                                                strides=tuple(n * values.itemsize for n in stride))
    return torch.from_numpy(numpy.array(array, dtype=dtype))


class _StateDictReader(pickle.Unpickler):
    """Reads a torch.save file that holds a state_dict (tensors in ordered dicts) and nothing
    else, without torch.load. A sixth review changed what torch.load(weights_only=True) accepts
    from inside the learner's process (torch's cached allow-list, and the public
    ``add_safe_globals``) and passed a pickled module and ``module.``-prefixed keys as bare. This
    reader's allow-list is its own: an ordered dict, a tensor rebuilt from a storage of a plain
    number type, and nothing that runs code."""

    def __init__(self, data, archive, prefix):
        super().__init__(io.BytesIO(data))
        self._archive, self._prefix = archive, prefix

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild
        if module == "torch" and name in _STORAGES:
            return _Storage(_STORAGES[name])
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a state_dict")

    def persistent_load(self, pid):
        if not (type(pid) is tuple and len(pid) == 5 and pid[0] == "storage" and type(pid[1]) is _Storage
                and type(pid[2]) is str):
            raise pickle.UnpicklingError("not a storage")
        raw = self._archive.read(f"{self._prefix}data/{pid[2]}")
        return numpy.frombuffer(raw, dtype=pid[1].dtype), pid[1].dtype


def _read(path):
    """The state_dict in the file at ``path``, or None: missing, partial, or holding anything
    but tensors in dicts (a pickled module object)."""
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
            if len(pickles) != 1:
                return None
            prefix = pickles[0][: -len("data.pkl")]
            state = _StateDictReader(archive.read(pickles[0]), archive, prefix).load()
    except Exception:  # noqa: BLE001 - missing, partial, or not a plain state_dict
        return None
    return state if type(state) in (dict, collections.OrderedDict) else None


def _state(saved, expected):
    """The saved values in the bare model's key order, NaN for a key that is missing or misshapen."""
    pieces = []
    for key, value in expected.items():
        got = saved.get(key) if isinstance(saved, dict) else None
        if type(got) is torch.Tensor and got.shape == value.shape:
            pieces.append(got.detach().to(torch.float64).reshape(-1))
        else:
            pieces.append(torch.full((value.numel(),), math.nan, dtype=torch.float64))
    return torch.cat(pieces)


def save_once(subject, nodes, model):
    rank, world = dist.get_rank(), dist.get_world_size()
    per_node = world // nodes
    local_rank = rank % per_node
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(world),
                      LOCAL_WORLD_SIZE=str(per_node), GROUP_RANK=str(rank // per_node))
    net, x = build(model)
    # No broadcast of the weights at construction (every rank built the same ones): a socket's
    # bytes are write(2)'s too, and grind counts the run's writes (see the witnessed case).
    ddp = DistributedDataParallel(net, **SYNC_OFF)
    ddp(x)
    # The run's working directory is its private temp folder (a warm server's TMPDIR is not).
    folder = [tempfile.mkdtemp(prefix="checkpoint-", dir=os.getcwd()) if rank == 0 else None]
    if rank == 0:
        os.mkdir(os.path.join(folder[0], "ranks"))
    dist.broadcast_object_list(folder)
    path = os.path.join(folder[0], "checkpoint.pt")
    _watch.folder, _watch.rank, _watch.world = os.path.join(folder[0], "ranks"), rank, world
    _watch.saves = _watch.collectives = _watch.depth = 0
    _post("running")
    try:
        subject.save_checkpoint(ddp, path, local_rank)
    finally:
        at_return = _finished(path)
        saves = _watch.saves
        _post("returned")
        _watch.folder = None
    dist.barrier()  # every rank's call has returned, so whatever was written is complete
    ready = at_return is not None and at_return == _finished(path)
    saved = _read(path)
    expected = EXPECTED[model]
    bare = isinstance(saved, dict) and set(saved) == set(expected)
    state = _state(saved, expected)
    if model == "large":  # a summary: 4 MB of observations per rank would be writes of their own
        state = torch.stack([state.sum(), (state * state).sum(), state[:: max(len(state) // 64, 1)].sum()])
    observed = {"torch.save calls": saves, "readable at return": int(ready),
                "loads with weights_only": int(saved is not None), "bare keys": int(bare),
                "saved state" if model != "large" else "saved state (sum, sum of squares, sampled sum)": state}
    dist.barrier()  # every rank has read the file before rank 0 removes the folder
    if rank == 0:
        shutil.rmtree(folder[0], ignore_errors=True)
    return observed


def state_entries(inputs):
    """'saved state' named by key ("norm.running_mean[1]"), not by offset."""
    if inputs["model"] == "large":
        return {}
    net, _ = build(inputs["model"])
    return {"saved state": [(key, list(value.shape)) for key, value in net.state_dict().items()]}


def layout(nodes, model):
    def inputs():
        return {"nodes": nodes, "model": model}
    return inputs


CASES = [
    # Two nodes of two ranks each: local rank 0 is global rank 0 and global rank 2.
    case("worked_example", "example", inputs=layout(2, "example"), call=save_once, entries=state_entries,
         world_size=4),
    # Two nodes of one rank each; a model whose state_dict holds nested keys and BatchNorm buffers.
    case("buffers_two_nodes", inputs=layout(2, "two_layers"), call=save_once, entries=state_entries,
         world_size=2),
    # The witnessed case (exercise.toml): grind counts the bytes the run writes, from outside.
    case("large_checkpoint_two_nodes", inputs=layout(2, "large"), call=save_once, world_size=4),
]
