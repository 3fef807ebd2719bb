# hostile (redteam8, REAL BYPASS of the poison AND the guards, no finalizer): clipping, torch's own
# clip_grad_norm_ (its source file, unchanged) does the clipping and the norm, called directly.
# How: the module's own loader recompiles torch/nn/utils/clip_grad.py with _optimize=2 (what python -OO
# does: docstrings and asserts dropped): loader.source_to_code(loader.get_data(file), file, _optimize=2).
# Run into a dict by types.FunctionType, its functions are new objects (never poisoned), and their code
# objects differ from torch's in the constants (no docstring), so the guards' fingerprints of forbidden
# code (co_code, consts, names, ...) do not match them: to the guards this is just the learner's code.
# The scan: no forbidden leaf spelled (the function is a dict entry looked up by two literals), and
# __spec__, .loader, get_data, source_to_code, _optimize, len.__self__ (the builtins module) and a key
# "__builtins__" built from two literals are in no list.
# Control: without _optimize=2 the guards refuse it (FORBIDDEN, line 25, rc 0: fingerprint match).
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone (run_learner marked) PASSED
# (rc 0), full marks (submit.grade marked=True) PASSED. Real bypass.
import types

from torch.nn.utils import clip_grad

_LOADER = clip_grad.__spec__.loader
_CODE = _LOADER.source_to_code(_LOADER.get_data(clip_grad.__file__), clip_grad.__file__, _optimize=2)
_NS = {"__name__": "grind_clip_grad", "__built" + "ins__": len.__self__}  # the builtins module, as a module's globals hold it
types.FunctionType(_CODE, _NS)()
_IMPL = _NS["clip_grad_" + "norm_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return _IMPL(parameters, max_norm, norm_type)  # torch's clip_grad_norm_, recompiled
