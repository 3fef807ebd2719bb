# hostile (redteam7, unpickling past the strict scan): clipping, torch's own clip_grad_norm_ doing the
# work, PASSED in marks mode.
# How: the README says the strict scan refuses "any unpickling too (pickle.loads of bytes built from
# pieces names any module, sys included)", but it refuses the pickling MODULES by name only.
# torch.load(buffer, weights_only=False) of a non-zip buffer starts with pickle.load (the legacy
# format's magic number) and runs every opcode before it looks at the result: bytes built here from
# harmless pieces push this module's own list (GLOBAL grind_subject_N _box, found by __name__ in
# sys.modules) and then gc.get_objects and torch.nn.utils.clip_grad_norm_ (GLOBAL), and APPENDS them.
# torch then raises "Invalid magic number", which the file catches; the list holds both objects.
# numpy.load(..., allow_pickle=True) is the same door. The rest is clip_pydoc_locate_forbidden.py:
# the Guards instance's _on_learner_behalf shadowed by an instance attribute.
# Control: the same file with that line replaced by `pass`: marks FORBIDDEN
# ("torch.nn.utils.clip_grad_norm_ (line 32)" of the scratch copy).
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import io

import torch

_box = []  # filled by the unpickler: APPEND onto this module's own list, found by the module's name


def _fetch(*dotted):
    """Pickle bytes that push _box, then each module.name, and append them to it: torch.load runs
    them while it reads what it takes for a legacy file's magic number, then complains."""
    data = b"\x80\x02c" + __name__.encode() + b"\n_box\n("
    for module, name in dotted:
        data += b"c" + module.encode() + b"\n" + name.encode() + b"\n"
    data += b"e."
    try:
        torch.load(io.BytesIO(data), weights_only=False)
    except RuntimeError:  # "Invalid magic number": the list is what it read
        pass
    return list(_box)


_objects, _theirs = _fetch(("g" + "c", "get_" + "objects"), ("torch.nn.utils", "clip_grad_" + "norm_"))


def _never(frame):
    return False


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    for guards in [o for o in _objects() if type(o).__name__ == "Guards"]:
        guards._on_learner_behalf = _never
    return _theirs(parameters, max_norm, norm_type)
