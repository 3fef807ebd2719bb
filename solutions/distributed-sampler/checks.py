"""Cases for distributed-sampler. No process group: the answer for rank r is a pure function of
(length, world size, rank, shuffle, seed, epoch, drop_last), so one process asks the subject for
every rank of a case in turn, as R processes would each ask for their own. Observed: each rank's
indices (``rank r``), and with several epochs ``epoch e, rank r``, as int64 tensors. The oracle is
torch.utils.data.DistributedSampler itself.
"""

import operator
import random

import torch

from grind_kit import case


def run(subject, length, world_size, shuffle, seed, epochs, drop_last):
    observed = {}
    for epoch in epochs:
        for rank in range(world_size):
            got = subject.rank_indices(length, world_size, rank, shuffle=shuffle, seed=seed, epoch=epoch,
                                       drop_last=drop_last)
            # operator.index: integers only (ints, numpy or 0-d tensor integers), never 2.0 or 2.5.
            indices = torch.tensor([operator.index(i) for i in got], dtype=torch.int64)
            observed[f"rank {rank}" if len(epochs) == 1 else f"epoch {epoch}, rank {rank}"] = indices
    return observed


def fixed(length, world_size, shuffle=False, seed=0, epochs=(0,), drop_last=False):
    def inputs():
        return {"length": length, "world_size": world_size, "shuffle": shuffle, "seed": seed,
                "epochs": list(epochs), "drop_last": drop_last}
    return inputs


def random_inputs(size, seed):
    """A dataset of ``size`` items; the world size, flags, seed and epoch drawn from the seed."""
    draw = random.Random(1000 * size + seed)
    return {"length": size, "world_size": draw.choice([2, 3, 4]), "shuffle": draw.random() < 0.75,
            "seed": draw.randrange(100), "epochs": [draw.randrange(1, 6)], "drop_last": draw.random() < 0.5}


CASES = [
    case("worked_example", "example", inputs=fixed(10, 3), call=run),
    case("worked_example_drop_last", "example", inputs=fixed(10, 3, drop_last=True), call=run),
    case("worked_example_shuffled", "example", inputs=fixed(7, 2, shuffle=True, epochs=(0, 1)), call=run),
    # Every combination of shuffle and drop_last, on lengths the world size divides and does not.
    case("even_no_shuffle", inputs=fixed(8, 4), call=run),
    case("even_drop_last", inputs=fixed(6, 3, drop_last=True), call=run),
    case("even_shuffled", inputs=fixed(12, 3, shuffle=True, seed=7, epochs=(2,)), call=run),
    case("even_shuffled_drop_last", inputs=fixed(8, 4, shuffle=True, seed=1, epochs=(3,), drop_last=True),
         call=run),
    case("uneven_shuffled_drop_last", inputs=fixed(11, 4, shuffle=True, seed=3, epochs=(0, 2), drop_last=True),
         call=run),
    case("seed_and_later_epochs", inputs=fixed(13, 3, shuffle=True, seed=42, epochs=(4, 5)), call=run),
    # Fewer items than ranks: padding wraps around (more than once for one item on four ranks),
    # and drop_last leaves every rank empty-handed.
    case("fewer_items_than_ranks", inputs=fixed(3, 4), call=run),
    case("one_item_four_ranks", inputs=fixed(1, 4, shuffle=True, seed=9), call=run),
    case("fewer_items_than_ranks_drop_last", inputs=fixed(3, 4, shuffle=True, drop_last=True), call=run),
    # One item fewer than the ranks, shuffled over two epochs: the last rank's only item is padding.
    case("one_fewer_than_ranks_shuffled", inputs=fixed(2, 3, shuffle=True, seed=5, epochs=(1, 2)), call=run),
    case("random", "random", inputs=random_inputs, call=run, sizes=[2, 5, 23, 64], seeds=2),
]
