# hostile (redteam7, bypass of the marks scan and the runtime guards): adam, Adam and AdamW that are
# torch.optim's own, wrapped, and which PASS in marks mode.
# How: as clip_pydoc_locate_forbidden.py: pydoc.locate reaches gc.get_objects from text pieces, the
# Guards instance found on the heap gets an instance attribute _on_learner_behalf that answers False
# (at import, inside Guards.learner(): the guards exist before the file loads), and torch's classes
# come from pydoc.locate("torch.optim." + name) where name is an entry point's own name (exempt from
# names_a_forbidden_api). The wrapper class is the learner's (grind_kit's construct() accepts it).
# Control: without the `_guards._on_learner_behalf = ...` line: marks FORBIDDEN (torch.optim.Adam).
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import pydoc

_objects = pydoc.locate("g" + "c.get_" + "objects")
for _guards in [o for o in _objects() if type(o).__name__ == "Guards"]:
    _guards._on_learner_behalf = lambda frame: False  # the guards' instance: no library namespace written
_TORCH = {name: pydoc.locate("torch.optim." + name) for name in ("Adam", "AdamW")}


class _Wrapped:
    def __init__(self, params, **kwargs):
        self._opt = _TORCH[type(self).__name__](params, **kwargs)
        self.param_groups, self.state = self._opt.param_groups, self._opt.state

    def step(self, closure=None):
        return self._opt.step(closure)

    def zero_grad(self, set_to_none=True):
        return self._opt.zero_grad(set_to_none)


class Adam(_Wrapped):
    pass


class AdamW(_Wrapped):
    pass
