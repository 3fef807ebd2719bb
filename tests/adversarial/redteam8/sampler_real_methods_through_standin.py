# hostile (redteam8, POISON GAP shown, held by the guards): distributed-sampler, the indices computed by
# torch's own DistributedSampler.__init__/__iter__ (the real functions, never poisoned).
# Why they are not poisoned: in the child, start_guards runs guards.install BEFORE poison.install, and
# guards.install has already put its stand-ins under every torch name. poison.install resolves each
# listed name with guards._resolve, so it finds the STAND-IN and swaps the code of the stand-in's own
# functions (for a class: the stand-in subclass's __new__ and __init_subclass__; for a function: the
# guard wrapper). torch's real classes and functions keep their code: a probe in a marked clipping run
# found clip_grad_norm_, _get_total_norm, _clip_grads_with_norm_ from clip_grad.py with their original
# code, and only grind_worker_guards' copies poisoned. A stand-in class is a SUBCLASS of the real one,
# so every real method is one attribute away: object.__new__ skips the poisoned __new__ and the real
# __init__ and __iter__ run. Here the guards still refuse it (a learner call is in progress), so the
# verdict is the guards', not the poison's (rc 0): for classes, "absent" holds only for __new__.
# The scan: a star import binds the name as a bare Name, which names_a_forbidden_api does not read.
# Expected: FORBIDDEN by the poison. Observed (2026-12-03): practice FORBIDDEN (guard, line 22), poison
# alone FORBIDDEN by the GUARD (rc 0: the real __init__ ran unpoisoned), full marks FORBIDDEN (guard).
# Not a bypass today (the guards hold), but the poison is not what holds it.
from torch.utils.data.distributed import *  # noqa: F403  (binds DistributedSampler, the stand-in)


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    sampler = object.__new__(DistributedSampler)  # noqa: F405  (the stand-in's poisoned __new__ skipped)
    DistributedSampler.__init__(sampler, range(length), num_replicas=world_size, rank=rank,  # noqa: F405
                                shuffle=shuffle, seed=seed, drop_last=drop_last)
    sampler.epoch = epoch
    return list(iter(sampler))  # torch's real __iter__
