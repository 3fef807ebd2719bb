"""Cases for no-sync-accumulation: every case runs on real gloo ranks (``world_size``).

Each rank builds the same small float64 model (same seed), wraps it in DistributedDataParallel,
and registers a communication hook on it before the subject runs. DDP calls a comm hook once for
every bucket it all-reduces, and these models are small enough for one bucket, so the hook
counts the gradient all-reduces. The hook then does what DDP does without one (torch's own
``allreduce_hook``: divide by R, all-reduce with SUM), and notes whether DDP's sync flag was off
when it ran: a reduction that happens while ``no_sync()`` is active is the mark of a forward
that ran outside the context (DDP decides at forward time whether the backward synchronises).

Observed on every rank: the number of gradient all-reduces, how many of them ran under no_sync,
and the model's gradients. The oracle's gradients are the single-process gradient of the mean
loss over the concatenation of every rank's microbatches (the full-group gradient).
"""

import inspect

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

from grind_kit import case


WIDE = 512  # the large model: WIDE x WIDE weights in float64
# init_sync appeared in torch 2.1; older versions broadcast at construction (a larger baseline).
SYNC_OFF = {"init_sync": False} if "init_sync" in inspect.signature(DistributedDataParallel.__init__).parameters else {}


class Scale(torch.nn.Module):
    """The worked example's model: one weight w = 1, predicting w * x."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones((), dtype=torch.float64))

    def forward(self, x):
        return self.w * x


def build(model):
    if model == "scale":
        return Scale()
    if model == "linear":
        return torch.nn.Linear(3, 2, dtype=torch.float64)
    if model == "large":  # 2 MB of gradients: its all-reduces dwarf every other case's traffic
        return torch.nn.Linear(WIDE, WIDE, dtype=torch.float64)
    return torch.nn.Sequential(torch.nn.Linear(3, 4, dtype=torch.float64), torch.nn.Tanh(),
                               torch.nn.Linear(4, 2, dtype=torch.float64))


def microbatches(seed, rank, k, batch, targets, model=None):
    """Rank ``rank``'s k microbatches: the worked example's targets (inputs all 1), or seeded data."""
    if targets is not None:
        return [(torch.ones(len(t), dtype=torch.float64), torch.tensor(t, dtype=torch.float64))
                for t in targets[rank]]
    gen = torch.Generator().manual_seed(1000 * seed + rank)
    width_in, width_out = (WIDE, WIDE) if model == "large" else (3, 2)
    return [(torch.randn(batch, width_in, generator=gen, dtype=torch.float64),
             torch.randn(batch, width_out, generator=gen, dtype=torch.float64)) for _ in range(k)]


def run(subject, model, k, seed=0, batch=2, targets=None):
    rank = dist.get_rank()
    torch.manual_seed(seed)  # the same initial weights on every rank (DDP also broadcasts rank 0's)
    # No broadcast of the weights at construction (every rank built the same ones from the same
    # seed): the traffic grind counts is then the gradients' all-reduces and little else.
    ddp = DistributedDataParallel(build(model), **SYNC_OFF)
    seen = {"all": 0, "no_sync": 0}

    def counting_allreduce(state, bucket):
        seen["all"] += 1
        seen["no_sync"] += not ddp.require_backward_grad_sync
        return default_hooks.allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, counting_allreduce)
    subject.accumulate_gradients(ddp, microbatches(seed, rank, k, batch, targets, model),
                                   torch.nn.functional.mse_loss)
    grads = []
    for name, p in ddp.module.named_parameters():
        if p.grad is None:
            raise RuntimeError(f"parameter {name} has no gradient after accumulate_gradients returned")
        grads.append(p.grad.reshape(-1))
    return {"gradient all-reduces": seen["all"], "all-reduces under no_sync": seen["no_sync"],
            "grads": torch.cat(grads)}


def fixed(**kwargs):
    def inputs():
        return dict(kwargs)
    return inputs


EXAMPLE = [[[0.0, 0.0], [-1.0, -1.0]],  # rank 0: two microbatches of two targets each
           [[1.0, 1.0], [0.0, 0.0]]]    # rank 1

CASES = [
    case("worked_example", "example", inputs=fixed(model="scale", k=2, targets=EXAMPLE), call=run, world_size=2),
    case("single_microbatch", inputs=fixed(model="linear", k=1, seed=2, batch=3), call=run, world_size=2),
    case("hidden_layer_four_microbatches", inputs=fixed(model="mlp", k=4, seed=3), call=run, world_size=2),
    # More than two ranks, and microbatches of a single example each (the statement allows both).
    case("three_ranks_microbatches_of_one", inputs=fixed(model="mlp", k=3, seed=4, batch=1), call=run,
         world_size=3),
    # The witnessed case (exercise.toml): grind counts its traffic from outside the ranks.
    case("large_model_four_microbatches", inputs=fixed(model="large", k=4, seed=4), call=run, world_size=2),
]
