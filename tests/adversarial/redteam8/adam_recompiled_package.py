# hostile (redteam8, REAL BYPASS of the poison AND the guards, no finalizer): adam, Adam and AdamW ARE
# torch's own classes (torch/optim/adam.py and optimizer.py, unchanged source), used directly.
# How: a meta-path finder serves an empty package "grind_optim" over torch/optim/, and every
# grind_optim.* submodule through a subclass of the modules' own SourceFileLoader that (a) raises
# OSError from path_stats, so the .pyc is skipped and nothing is written, and (b) compiles the source
# with _optimize=2 (python -OO: docstrings and asserts gone), after two mechanical renames (b"self" ->
# b"me_", b"bias_correction" -> b"bc_": functions without a docstring or assert compiled to the very same
# code, and the guards matched them: first Adam's own methods, then _single_tensor_adam). The copies' functions were never poisoned, and their code objects differ from torch's (constants,
# variable names), so the guards' fingerprints of forbidden code do not match: to the guards, this Adam
# is just a class of the learner's. Relative imports stay
# inside the copy, so nothing in the real torch.optim is rebound (the integrity check sees nothing).
# The scan: `from grind_optim.adam import *` binds Adam as a bare Name; ModuleSpec and the loader class
# are reached as type(torch.optim.__spec__) and type(...loader); none of it is in a list.
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone (run_learner marked) PASSED
# (rc 0), full marks (submit.grade marked=True) PASSED. Real bypass.
import os
import sys

import torch

_SPEC = torch.optim.__spec__
_DIR = os.path.dirname(_SPEC.origin)  # torch/optim/


class _Loader(type(_SPEC.loader)):
    def path_stats(self, path):
        raise OSError("no bytecode: compile the source")

    def source_to_code(self, data, path, *, _optimize=-1):
        # torch's source, with two spellings changed: self -> me_, the local bias_correction* -> bc_*
        return super().source_to_code(data.replace(b"self", b"me_").replace(b"bias_correction", b"bc_"), path, _optimize=2)


class _Empty:
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        pass


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name == "grind_optim":
            spec = type(_SPEC)(name, _Empty(), is_package=True)
            spec.submodule_search_locations.append(_DIR)
            return spec
        if name.startswith("grind_optim.") and name.count(".") == 1:
            file = os.path.join(_DIR, name.split(".")[1] + ".py")
            if os.path.isfile(file):
                return type(_SPEC)(name, _Loader(name, file), origin=file)
        return None


sys.meta_path.insert(0, _Finder())
from grind_optim.adam import *  # noqa: E402,F403  (binds Adam: torch's class, recompiled)


class AdamW(Adam):  # noqa: F405
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         decoupled_weight_decay=True)
