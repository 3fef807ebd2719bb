# hostile (redteam7, bypass of the marks scan and the runtime guards): clipping, an answer whose work is
# done by the forbidden torch.nn.utils.clip_grad_norm_ itself, and which PASSES in marks mode.
# How: pydoc.locate (and pkgutil.resolve_name, torch._utils._import_dotted_name, logging.config's
# resolver...) turns a dotted TEXT into a module or an attribute, and none of them is a door for
# judge/introspection.py: the scan believes text reaches code only through __import__, importlib,
# getattr or exec. "g" + "c.get_" + "objects" is harmless text piece by piece, so the file gets
# gc.get_objects without spelling gc; the heap holds the child's Guards instance, whose
# _on_learner_behalf is replaced by an instance attribute (instance dicts are no library namespace:
# judge/worker/integrity.py sees nothing). The forbidden function is reached by the full dotted string
# "torch.nn.utils.clip_grad_norm_", which names_a_forbidden_api lets through (it matches a string
# constant only when it equals the last name exactly).
# Control: the same file with the `guards._on_learner_behalf = ...` line replaced by `pass`:
# marks FORBIDDEN ("torch.nn.utils.clip_grad_norm_ (line 16)").
# Expected: FORBIDDEN in both modes. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import pydoc

import torch

_objects = pydoc.locate("g" + "c.get_" + "objects")  # the gc module's heap walk, by a dotted string
_theirs = pydoc.locate("torch.nn.utils.clip_grad_norm_")  # torch's (the guard's stand-in), by a string


def _never(frame):
    return False


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    for guards in [o for o in _objects() if type(o).__name__ == "Guards"]:
        guards._on_learner_behalf = _never  # an instance attribute: no library namespace written
    return _theirs(parameters, max_norm, norm_type)
