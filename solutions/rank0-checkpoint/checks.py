"""Cases for rank0-checkpoint: every case runs on real gloo ranks (``world_size``), laid out in
nodes the way torchrun lays them out (global rank = node * ranks per node + local rank).

Each rank builds the same small model, wraps it in DistributedDataParallel, runs one forward
pass (so a BatchNorm's running statistics hold something), is told its local rank (the argument,
and the variables torchrun sets: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK), and
calls the subject with a path in this case's kept folder: one that grind names (the
``GRIND_KEPT`` variable) and reads after the run, outside every process that held the learner's
code (judge/kept.py). Every rank holds the same weights, so whichever rank writes, the file's
bytes are the same: what tells the mistakes apart is who wrote, when the file was there and what
it holds.

Observed here, on every rank:

- ``torch.save calls``: how many times this rank called ``torch.save`` during the subject's call.
  ``torch.save`` is wrapped here, when the checks load (before the learner's file, so a
  ``from torch import save`` in it gets the wrapper too). It is the learner's process's word: on
  the witnessed case grind's count of the bytes the run wrote (exercise.toml) supersedes it.

Observed by grind, after the run, from the kept folder (judge/kept.py; a forger that rewrites
every value in the ranks changes none of these):

- ``written by a held torch.save``: 1 when the checkpoint's last change came no earlier than the
  moment the process that watches the ranks let a held save go (below), on the kernel's clock,
  else 0.
- ``readable at return``: 1 when the file left is a finished zip and it is the very file (inode,
  ctime, size) that stood at the path the moment this rank's record reached grind's child (the
  process that watches the ranks looks then, on the kernel's word). Without a barrier this is a
  race that a loaded machine could win either way; the wrapper makes it deterministic: a save
  waits, before it writes, until the watcher lets it go (``hold_save``, in grind's
  worker/child/ranks.py), which it does once every other rank has returned and been looked at,
  waits its own turn to save, or waits, asleep on the kernel's word, in a collective that cannot
  complete without this rank. So a rank that returns without waiting for the writer is looked
  at before the file exists, however the ranks are scheduled, and a barrier before the save is
  caught as surely as none; nothing the rank runs after its return (a thread, a forked process)
  changes that look. With a barrier after the save the wait ends as soon as the other ranks
  reach it (the watcher's ``HOLD_S`` caps it for code that waits some other way). What a rank
  says about where it waits reaches the watcher as lines its code signs with a key the learner's
  code never sees, so a rank that lies about itself cannot shorten the hold. A file written
  without ``torch.save`` was held by nothing: nothing then shows that the other ranks waited for
  it, which "written by a held torch.save" says.
- ``loads with weights_only``: 1 when the file reads as a state_dict and nothing else (tensors of
  plain number types in dicts: what ``torch.load(path, weights_only=True)`` accepts of one; a
  pickled module object is not), read by grind's own reader, which never unpickles
  (judge/worker/checkpoint.py), else 0;
- ``bare keys``: 1 when the file's keys are exactly the bare model's ``state_dict`` keys (no
  ``module.`` prefix, buffers included), as this case's ``checkpoint file`` entry declares them,
  else 0;
- ``saved state``: the file's values in the bare model's key order (NaN where a key is missing or
  misshapen, or everywhere when the file does not read as a state_dict); for the large model its
  sum, sum of squares and a sampled sum.
"""

import inspect
import os
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from grind_kit import case

try:  # the watcher's hold (grind's worker, in the child that runs these checks)
    from grind_worker.child.ranks import hold_save
except ImportError:  # these checks loaded some other way: nothing holds a save
    def hold_save():
        return False

# init_sync appeared in torch 2.1; older versions broadcast at construction (a larger baseline).
SYNC_OFF = {"init_sync": False} if "init_sync" in inspect.signature(DistributedDataParallel.__init__).parameters else {}
CHECKPOINT = "checkpoint.pt"  # the name grind reads in a kept folder (protocol.KEPT_CHECKPOINT)


class _Watch:
    """This rank's part in the case while the subject's call runs (``active`` only then)."""

    active = False
    saves = 0


_watch = _Watch()
_torch_save = torch.serialization.save


def _watched_save(obj, f, *args, **kwargs):
    if not _watch.active:
        return _torch_save(obj, f, *args, **kwargs)
    _watch.saves += 1
    hold_save()
    return _torch_save(obj, f, *args, **kwargs)


# torch.save's name and docstring, without functools.wraps's __wrapped__ (a way around the count)
_watched_save.__name__, _watched_save.__qualname__ = _torch_save.__name__, _torch_save.__qualname__
_watched_save.__doc__, _watched_save.__module__ = _torch_save.__doc__, _torch_save.__module__
torch.save = torch.serialization.save = _watched_save


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
    # grind's folder for this case (protocol.kept_folder): grind reads what is left in it after
    # the run, outside every process that held the learner's code (judge/kept.py).
    kept = os.environ.get("GRIND_KEPT") or tempfile.mkdtemp(prefix="checkpoint-", dir=os.getcwd())
    path = os.path.join(kept, CHECKPOINT)
    _watch.active, _watch.saves = True, 0
    try:
        subject.save_checkpoint(ddp, path, local_rank)
    finally:
        saves = _watch.saves
        _watch.active = False
    return {"torch.save calls": saves}


def state_entries(inputs):
    """What the checkpoint should hold, the bare model's state_dict keys and shapes (the
    "checkpoint file" entry, which grind reads the kept file against: judge/kept.py), and
    'saved state' named by key ("norm.running_mean[1]"), not by offset. Taken from the model of
    the case built here, before any subject touches it."""
    pieces = [(key, list(value.shape)) for key, value in EXPECTED[inputs["model"]].items()]
    return {"checkpoint file": pieces} if inputs["model"] == "large" else \
        {"checkpoint file": pieces, "saved state": pieces}


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
    case("large_checkpoint_two_nodes", inputs=layout(2, "large"), call=save_once, entries=state_entries,
         world_size=4),
]
