"""Known-wrong ways to compute a rank's share of a dataset. Each is a whole implementation a
learner could write; they share one sampler and differ in the piece they get wrong.

Every pitfall is a *delta* (grind_kit.Deltas): keyword options of the shared ``_implementation``.
Deltas that set different options compose into one sampler making both mistakes
(``combine("contiguous-chunks", "no-padding")`` is ``torch.chunk`` of the unpadded ordering);
``combine`` returns None when both set the same option. Pitfalls that are a real library's own
behaviour carry ``"library"`` (and ``"convention": True`` when it is documented as intended)."""

import random

import numpy as np
import torch

from grind_kit import Deltas


def _ordering(length, rank, shuffle, seed, epoch, options):
    if not shuffle:
        return list(range(length))
    value = (seed if options.get("use_seed", True) else 0) + (epoch if options.get("use_epoch", True) else 0)
    if options.get("rank_in_seed"):
        value += rank  # each rank draws its own permutation
    rng = options.get("rng", "torch")
    if rng == "python":  # the standard library's Mersenne Twister: another permutation for the same seed
        order = list(range(length))
        random.Random(value).shuffle(order)
        return order
    if rng == "numpy":
        return np.random.RandomState(value).permutation(length).tolist()
    generator = torch.Generator()
    generator.manual_seed(value)
    return torch.randperm(length, generator=generator).tolist()


def _pad(order, total, how):
    if how == "none" or not order:
        return order
    if how == "dataset":  # the padding taken from the dataset's first items, not the ordering's
        return order + [i % len(order) for i in range(total - len(order))]
    if how == "once":  # one slice of the ordering: too short when the padding exceeds the dataset
        return order + order[:total - len(order)]
    return [order[i % len(order)] for i in range(total)]  # "wrap": starts over as often as needed


def _split(order, world_size, rank, how):
    if how == "stride":
        return order[rank::world_size]
    if how == "blocks":  # contiguous blocks of ceil(len / R), the last ones short when unpadded
        size = -(-len(order) // world_size)
        return order[rank * size:(rank + 1) * size]
    # "balanced": contiguous shards whose sizes differ by at most one (np.array_split's rule)
    base, extra = divmod(len(order), world_size)
    start = rank * base + min(rank, extra)
    return order[start:start + base + (rank < extra)]


def _implementation(options):
    drop = options.get("drop", "after_shuffle")  # "after_shuffle" (right) | "before_shuffle" | "never" | "always"

    def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
        drop_last = (drop_last and drop != "never") or drop == "always"
        per_rank = length // world_size if drop_last else -(-length // world_size)
        total = per_rank * world_size
        if drop_last and drop == "before_shuffle" and shuffle:
            # only the first `total` items are ever shuffled: the same tail is missing every epoch
            order = _ordering(total, rank, shuffle, seed, epoch, options)
        else:
            order = _ordering(length, rank, shuffle, seed, epoch, options)
        order = order[:total] if drop_last else _pad(order, total, options.get("pad", "wrap"))
        return _split(order, world_size, rank, options.get("split", "stride"))
    return rank_indices


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"  # every pair that sets different options; each subject costs microseconds
combine = MISTAKES.combine


PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "epoch-ignored",
        "name": "the epoch left out of the shuffle's seed",
        "delta": {"use_epoch": False},
        "explanation": "The permutation was seeded with the seed alone, so every epoch visits the data in the "
                       "same order, and each rank sees the same items every epoch. This is the classic "
                       "forgotten sampler.set_epoch(epoch): DistributedSampler seeds its generator with "
                       "seed + epoch, and the epoch is the only thing that changes from one epoch to the next.",
        "hint": "Seed the generator with seed + epoch.",
    },
    {
        "slug": "seed-ignored",
        "name": "the seed left out of the shuffle",
        "delta": {"use_seed": False},
        "library": "DistributedSampler before PyTorch 1.6 (no seed argument: its generator was seeded with the epoch)",
        "explanation": "The permutation was seeded with the epoch alone, so two runs with different seeds "
                       "shuffle identically. DistributedSampler seeds its generator with seed + epoch; the "
                       "seed is what lets two runs (or two samplers) differ. DistributedSampler itself had no "
                       "seed argument before PyTorch 1.6 and seeded with the epoch alone, so code ported from "
                       "that era does this.",
        "hint": "Seed the generator with seed + epoch, not epoch alone.",
    },
    {
        "slug": "rank-in-seed",
        "name": "each rank shuffling with its own seed",
        "delta": {"rank_in_seed": True},
        "explanation": "The rank went into the shuffle's seed, so each rank permuted the dataset differently "
                       "and then took its stride of its own permutation. The shares are no longer disjoint: "
                       "some items are read by two ranks in the same epoch and others by none. The ordering "
                       "must be the same on every rank; only the positions a rank takes depend on its rank.",
        "hint": "Every rank must draw the same permutation: seed it with seed + epoch, nothing rank-specific.",
    },
    {
        "slug": "contiguous-chunks",
        "name": "contiguous blocks instead of a stride",
        "delta": {"split": "blocks"},
        "explanation": "Rank r took the r-th contiguous block of the (padded) ordering instead of every R-th "
                       "item starting at r. Every rank gets as many items as with the stride, but not the same "
                       "ones: without shuffling rank 0 reads the start of the dataset and rank R-1 its end "
                       "plus all of the padding, where DistributedSampler deals the items out like cards, "
                       "position r, r + R, r + 2R, ...",
        "hint": "Take a stride of the padded ordering: padded[rank::world_size].",
    },
    {
        "slug": "contiguous-shards",
        "name": "contiguous shards of unequal sizes (np.array_split, detectron2's InferenceSampler)",
        "delta": {"split": "balanced", "pad": "none"},
        "library": "detectron2's InferenceSampler (contiguous shards whose sizes differ by one, for evaluation); "
                   "np.array_split and torch.tensor_split",
        "convention": True,
        "explanation": "The unpadded ordering was cut into R contiguous shards whose sizes differ by at most "
                       "one, as np.array_split or torch.tensor_split cut it. That is detectron2's "
                       "InferenceSampler, deliberately: evaluation must see every item exactly once, so it "
                       "accepts unequal shards. A training sampler cannot: the ranks get different counts (a "
                       "rank that runs out of batches stops joining DDP's all-reduce and the others hang), and "
                       "DistributedSampler pads and then deals the items out with a stride.",
        "hint": "Pad the ordering to a multiple of R first, then take padded[rank::world_size].",
    },
    {
        "slug": "no-padding",
        "name": "no padding: unequal counts per rank",
        "delta": {"pad": "none"},
        "explanation": "Without drop_last the ordering was not padded, so when R does not divide the length "
                       "the first ranks get one item more than the others. In a real run the ranks then "
                       "disagree on the number of batches: the shorter ones finish the epoch while the "
                       "longer ones wait in DDP's gradient all-reduce for partners that never come, and the "
                       "job hangs. DistributedSampler pads up to ceil(length / R) items per rank by reusing "
                       "the ordering's first items.",
        "hint": "Pad the ordering to R * ceil(length / R) with its own first items before taking the stride.",
    },
    {
        "slug": "padding-once",
        "name": "padding with a single slice, too short for a tiny dataset",
        "delta": {"pad": "once"},
        "library": "DistributedSampler up to PyTorch 1.7 (pytorch/pytorch#45324, fixed by #45329) and "
                   "mmdetection's sampler before open-mmlab/mmdetection#4257",
        "explanation": "The padding was order[:padding], one slice of the ordering. When the padding is larger "
                       "than the dataset itself (one item on four ranks needs three copies) the slice is too "
                       "short and the last ranks get fewer items, or none. DistributedSampler itself did this "
                       "up to PyTorch 1.7, where its length assertion then failed; it now repeats the ordering "
                       "as many times as it takes.",
        "hint": "Repeat the ordering cyclically until it is long enough: padded[i] = order[i % length].",
    },
    {
        "slug": "drop-last-ignored",
        "name": "drop_last ignored",
        "delta": {"drop": "never"},
        "explanation": "drop_last=True was treated like False: the ordering was padded to ceil(length / R) "
                       "items per rank instead of cut to length // R. drop_last exists for the runs where "
                       "a repeated item is unwelcome (a validation metric would count it twice): with it, "
                       "DistributedSampler drops the tail of the (shuffled) ordering so that R divides what "
                       "is left.",
        "hint": "With drop_last, each rank gets length // R items: cut the ordering to R times that, no padding.",
    },
    {
        "slug": "drop-before-shuffle",
        "name": "the tail dropped before shuffling",
        "delta": {"drop": "before_shuffle"},
        "explanation": "With drop_last the ordering was a permutation of the first R * (length // R) items "
                       "only, so the dataset's last few items are dropped in every epoch and never seen in "
                       "training. DistributedSampler shuffles the whole dataset first and then cuts the "
                       "permutation's tail: a different handful of items sits out each epoch.",
        "hint": "Shuffle all `length` items, then cut the permutation to R * (length // R).",
    },
    {
        "slug": "python-random-shuffle",
        "name": "shuffled with Python's random, not torch.randperm",
        "delta": {"rng": "python"},
        "explanation": "The ordering was shuffled with Python's random module (random.Random(seed + epoch)."
                       "shuffle, or random.seed then random.shuffle). That is a fine shuffle, and the same on "
                       "every rank, but not DistributedSampler's: a different generator gives a different "
                       "permutation for the same seed, so a resumed run, or a custom sampler meant to replace "
                       "torch's, reads the items in another order than the job it continues.",
        "hint": "Draw the permutation the way DistributedSampler does: torch.randperm(length, generator=g) with "
                "g = torch.Generator() seeded with seed + epoch.",
    },
    {
        "slug": "numpy-permutation",
        "name": "shuffled with numpy's RandomState, not torch.randperm",
        "delta": {"rng": "numpy"},
        "explanation": "The ordering came from np.random.RandomState(seed + epoch).permutation(length). It is "
                       "the same on every rank, so the shares are disjoint, but numpy's generator gives another "
                       "permutation than torch's for the same seed: not the order DistributedSampler reads, and "
                       "not what a run resumed with torch's sampler expects.",
        "hint": "Use torch.randperm(length, generator=g), g = torch.Generator() seeded with seed + epoch.",
    },
    {
        "slug": "always-floor",
        "name": "the tail dropped without drop_last (length // R instead of the ceiling)",
        "delta": {"drop": "always"},
        "explanation": "Each rank got length // R items whether or not drop_last was set, so without drop_last "
                       "the last length % R items of the ordering were never read. DistributedSampler's default "
                       "(drop_last=False) rounds up instead: ceil(length / R) items per rank, the shortfall "
                       "padded with the ordering's first items, so every item is seen every epoch.",
        "hint": "Without drop_last, per_rank = ceil(length / R) = -(-length // R), and pad to R times that.",
    },
    {
        "slug": "padding-from-dataset",
        "name": "padded with the dataset's first items instead of the shuffled ordering's",
        "delta": {"pad": "dataset"},
        "explanation": "The padding repeated items 0, 1, 2, ... of the dataset rather than the first entries of "
                       "this epoch's shuffled ordering. Without shuffling the two agree; with it, the same few "
                       "items are read twice in every epoch. DistributedSampler pads by starting the "
                       "(shuffled) ordering over.",
        "hint": "Pad with the ordering itself: padded[i] = order[i % length], after the shuffle.",
    },
])
