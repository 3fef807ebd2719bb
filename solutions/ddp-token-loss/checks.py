"""Cases for ddp-token-loss: every case runs on real gloo ranks (``world_size``).

Each rank builds the same small model (same seed), wraps it in DistributedDataParallel, computes
per-token losses on its own batch, hands them to the subject with the rank's mask of valid
tokens, and calls backward on what the subject returns. DDP then averages the gradients over the
ranks. Observed on every rank: the model's gradients after DDP's averaging (the loss value
itself is not part of the contract: only what its backward does). The reference's gradients are the gradient of the mean over every valid
token of every rank, which tests/test_distributed.py recomputes in one process.
"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from grind_kit import case


class Scale(torch.nn.Module):
    """The worked example's model: one weight w, and the loss of token t is w * c_t."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones((), dtype=torch.float64))

    def forward(self, c):
        return self.w * c


def run_example(subject, costs, valid):
    rank = dist.get_rank()
    model = DistributedDataParallel(Scale())
    c = torch.tensor(costs[rank], dtype=torch.float64)
    mask = torch.tensor(valid[rank], dtype=torch.bool)
    subject.ddp_token_loss(model(c), mask).backward()
    return {"grad": model.module.w.grad}


def batch(seed, rank, lengths, width, vocab, dims):
    """Rank ``rank``'s batch: one row per entry of ``lengths[rank]`` (that many valid tokens),
    padded to ``width``; features, targets and the mask."""
    gen = torch.Generator().manual_seed(1000 * seed + rank)
    rows = len(lengths[rank])
    x = torch.randn(rows, width, dims, generator=gen, dtype=torch.float64)
    y = torch.randint(0, vocab, (rows, width), generator=gen)
    mask = torch.arange(width).expand(rows, width) < torch.tensor(lengths[rank]).unsqueeze(1)
    return x, y, mask


def run_model(subject, seed, lengths, width, vocab=3, dims=2, float_mask=False):
    rank = dist.get_rank()
    torch.manual_seed(seed)  # the same initial weights on every rank (DDP also broadcasts rank 0's)
    model = DistributedDataParallel(torch.nn.Linear(dims, vocab, dtype=torch.float64))
    x, y, mask = batch(seed, rank, lengths, width, vocab, dims)
    logits = model(x)
    token_losses = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1),
                                                     reduction="none").reshape(y.shape)
    subject.ddp_token_loss(token_losses, mask.to(torch.float64) if float_mask else mask).backward()
    return {"grads": torch.cat([p.grad.reshape(-1) for p in model.module.parameters()])}


def fixed(**kwargs):
    def inputs():
        return dict(kwargs)
    return inputs


def example_inputs():
    return {"costs": [[1.0, 2.0, 3.0], [6.0, 9.0, 9.0]], "valid": [[True, True, True], [True, False, False]]}


CASES = [
    case("worked_example", "example", inputs=example_inputs, call=run_example, world_size=2),
    case("unequal_counts", inputs=fixed(seed=1, lengths=[[4, 1], [2]], width=4), call=run_model, world_size=2),
    case("equal_counts", inputs=fixed(seed=2, lengths=[[3], [3]], width=3), call=run_model, world_size=2),
    case("rank_without_tokens", inputs=fixed(seed=3, lengths=[[3, 2], [0]], width=3), call=run_model,
         world_size=2),
    case("float_mask", inputs=fixed(seed=4, lengths=[[1], [3, 3]], width=3, float_mask=True), call=run_model,
         world_size=2),
    case("four_ranks", inputs=fixed(seed=5, lengths=[[2], [5, 1], [3], [4, 4]], width=5), call=run_model,
         world_size=4),
    # Nothing to learn from, on rank 0 of three (rank 0 also decides nothing special); then on every
    # rank: N = 0, and the loss must be a zero, not 0 / 0.
    case("rank0_without_tokens_three_ranks", inputs=fixed(seed=6, lengths=[[0, 0], [2, 1], [3]], width=3),
         call=run_model, world_size=3),
    case("no_tokens_anywhere", inputs=fixed(seed=7, lengths=[[0], [0, 0]], width=2), call=run_model,
         world_size=2),
]
