# hostile (redteam8, REAL BYPASS of the poison AND the guards, no finalizer): rmsprop, RMSprop IS torch's own
# class (torch/optim/rmsprop.py and optimizer.py, recompiled), used directly. Same loader as
# adam_recompiled_package.py (whose header explains it).
# How: a meta-path finder serves an empty package "grind_optim" over torch/optim/, and every
# grind_optim.* submodule through a subclass of the modules' own SourceFileLoader that (a) raises
# OSError from path_stats, so the .pyc is skipped and nothing is written, and (b) compiles the source
# with _optimize=2 (python -OO: docstrings and asserts gone), after two mechanical renames (b"self" ->
# b"me_", b"bias_correction" -> b"bc_": functions without a docstring or assert compiled to the very same
# code, and the guards matched them: first Adam's own methods, then _single_tensor_adam). The copies' functions were never poisoned, and their code objects differ from torch's (constants,
# variable names), so the guards' fingerprints of forbidden code do not match: to the guards, this Adam
# is just a class of the learner's. Relative imports stay
# inside the copy, so nothing in the real torch.optim is rebound (the integrity check sees nothing).
# The scan: `from grind_optim.rmsprop import *` binds RMSprop as a bare Name; ModuleSpec and the loader class
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
        # torch's source, with local spellings changed (self, bias_correction*, d_p_list, square_avgs)
        return super().source_to_code(data.replace(b"self", b"me_").replace(b"bias_correction", b"bc_").replace(b"d_p_list", b"dpl_").replace(b"square_avgs", b"sqavgs_"), path, _optimize=2)


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
from grind_optim.rmsprop import *  # noqa: E402,F403  (binds RMSprop: torch's class, recompiled)

RMSprop = RMSprop  # noqa: F405  (the entry name, bound in this file for the static check)
