# hostile (redteam8, REAL BYPASS of the poison AND the guards, in the ranks): sharded-clip, the local
# norm and the scaling of the shard are torch's own get_total_norm and clip_grads_with_norm_
# (torch/nn/utils/clip_grad.py recompiled with _optimize=2, as in clip_recompiled_optimize2.py); only
# the all_reduce of the local norms (the p-th powers, or the max) is the learner's.
# Control: _SCALE a no-op FAILS 2 of 13.
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone (run_learner marked) PASSED
# (rc 0), full marks (submit.grade marked=True) PASSED. Real bypass.
import types

import torch
import torch.distributed as dist
from torch.nn.utils import clip_grad

_LOADER = clip_grad.__spec__.loader
_NS = {"__name__": "grind_clip_grad", "__built" + "ins__": len.__self__}
types.FunctionType(_LOADER.source_to_code(_LOADER.get_data(clip_grad.__file__), clip_grad.__file__,
                                          _optimize=2), _NS)()
_NORM = _NS["_get_total" + "_norm"]
_SCALE = _NS["_clip_grads_with" + "_norm_"]


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    norm_type = float(norm_type)
    present = [p.grad for p in parameters if p.grad is not None]
    dtype = present[0].dtype if present else torch.get_default_dtype()
    grads = [g for g in present if g.numel()]  # an empty tensor has no inf-norm in torch's function
    local = _NORM(grads, norm_type) if grads else torch.zeros((), dtype=dtype)  # torch's get_total_norm
    if norm_type == float("inf"):
        dist.all_reduce(local, op=dist.ReduceOp.MAX)
        total = local
    else:
        powered = local ** norm_type
        dist.all_reduce(powered, op=dist.ReduceOp.SUM)
        total = powered ** (1.0 / norm_type)
    _SCALE(parameters, max_norm, total)  # torch's clip_grads_with_norm_
    return total
