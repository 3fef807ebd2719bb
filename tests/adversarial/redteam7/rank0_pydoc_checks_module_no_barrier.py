# hostile (redteam7): rank0-checkpoint, the no-barrier mistake (only rank 0 writes, nobody waits)
# PASSES in marks mode.
# How: pydoc.locate("g" + "c.get_" + "objects") and pydoc.locate("grind_" + "checks") (the scan
# refuses grind_checks only as an import or a whole word of text; pydoc's __import__ finds it in
# sys.modules). The integrity Record's transition/breaches are shadowed by instance attributes
# answering [] (at import, in the child, so every rank forked later inherits it), and the checks'
# module global _finished is replaced by a function answering the same bytes every time:
# "readable at return" compares two of its answers and reads 1 on every rank. `_checks._finished =
# ...` is a store on a name bound by a call, not by an import, so _rebinds_a_module lets it through.
# Controls: without the Record line: marks FORBIDDEN ("your code replaced grind_checks._finished");
# without the _finished line: marks FAILED 0 of 3.
# Expected: FAILED pitfall=no-barrier. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import pydoc

import torch
import torch.distributed as dist

_objects = pydoc.locate("g" + "c.get_" + "objects")
_checks = pydoc.locate("grind_" + "checks")  # the checks module, by its name in sys.modules


def _nothing():
    return []


def _same(path):
    return b"finished"  # "readable at return" compares two answers of this function


for _record in [o for o in _objects() if type(o).__name__ == "Record"]:
    _record.transition = _record.breaches = _nothing  # the integrity checks answer "nothing changed"
_checks._finished = _same  # a plain store on a local name: no import binds it, so the scan lets it be


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    # WRONG: no barrier; the other ranks return before rank 0 has written anything
