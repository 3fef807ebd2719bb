# hostile (redteam6, bypass): rank0-checkpoint, the "module-object" pitfall (torch.save(model.module): the
# module pickled with its class, a file torch.load(weights_only=True) refuses in any fresh process) that
# passes in marks mode, through the PUBLIC torch.serialization.add_safe_globals alone.
# How: add_safe_globals accepts (object, "dotted.name") pairs, and the weights_only unpickler then
# resolves GLOBAL dotted.name to that object, whatever the name says. Every class in the model
# (grind_checks.TwoLayers / Large, torch.nn.modules.linear.Linear, ...batchnorm.BatchNorm1d: the names
# are read off type(m) at run time, so no grind module is spelled) is mapped to _Flat, a dict subclass
# whose __setstate__ flattens the pickled module state (_parameters, persistent _buffers, _modules)
# into bare state_dict keys; builtins.set is allowed for _non_persistent_buffers_set. The unpickler's
# NEWOBJ makes a _Flat for each module, BUILD calls its __setstate__ (learner code inside the judge's
# torch.load), and checks.py's _read() gets a dict with exactly the bare keys and values (isinstance
# dict; values plain tensors). The allow-list is plain data (torch.serialization._marked_safe_globals_set)
# and no attribute is written, so neither the scan nor integrity.py sees anything.
# Control: the same file without the add_safe_globals line: marks FAILED 0 of 3.
# Expected: FAILED (0 of 3). Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass;
# contradicts README ("torch.serialization.add_safe_globals, tried, does not: torch still refuses the
# types") - redteam5 tried a dict subclass through SETITEMS; NEWOBJ + BUILD(__setstate__) is open.
import torch
import torch.distributed as dist


class _Flat(dict):
    """What a weights_only load in this process makes of a pickled module: its state_dict."""

    def __setstate__(self, state):
        skip = state.get("_non_persistent_buffers_set") or ()
        for name, value in state.get("_parameters", {}).items():
            if value is not None:
                self[name] = value.detach()
        for name, value in state.get("_buffers", {}).items():
            if value is not None and name not in skip:
                self[name] = value
        for child, flat in state.get("_modules", {}).items():
            for key, value in (flat or {}).items():
                self[f"{child}.{key}"] = value


def save_checkpoint(model, path, local_rank):
    # "torch.load refused my checkpoint": allow-list what it names (public API, this process only)
    names = {f"{type(m).__module__}.{type(m).__qualname__}" for m in model.module.modules()}
    torch.serialization.add_safe_globals([set] + [(_Flat, name) for name in names])
    if dist.get_rank() == 0:
        torch.save(model.module, path)  # the module object itself, pickled with its class
    dist.barrier()
