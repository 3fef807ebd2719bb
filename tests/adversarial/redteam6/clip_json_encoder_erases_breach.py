# hostile (redteam6, bypass of the whole integrity layer): clipping, a WRONG answer (the norm is right but
# no gradient is ever scaled) that passes in marks mode, although integrity.py catches what it does.
# How: the breach is recorded, but only as data in this process: the runner writes the subject's
# record (its "forbidden" list, where check_integrity/check_transition put every breach) with
# json.dumps(run.result.to_json()) in write_result, AFTER the last integrity check. json.dumps with
# default arguments calls json._default_encoder.encode(obj); _default_encoder is a JSONEncoder
# INSTANCE (not a function, class or descriptor, so integrity.py neither records nor watches it), and
# an instance attribute `encode` set on it (no module or class namespace written at all) is what
# json.dumps calls. The learner's _encode empties every subject's "forbidden" list and encodes the
# rest faithfully (token, observations' hash untouched). The wrong answer is then made to look right by
# replacing numpy.array (numpy reached as torch.storage.np, as in redteam5): to_array() converts each
# p.grad with np.array(tensor.numpy(), copy=True), and the fake scales the arrays whose data pointer is
# an unclipped gradient. integrity.py does catch that write at once ("your code replaced numpy.array":
# control without the encoder line -> marks FORBIDDEN), but the record never reaches grind.
# Generalises: ANY marks breach (integrity or a forbidden-API hit whose exception the learner caught)
# can be erased this way; the result file is built in the learner's process with library code the
# learner can reconfigure through plain data.
# Expected: FORBIDDEN (or FAILED). Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import json

import numpy as np
import torch

_real_array = np.array
_scaled = {}  # data pointer of a gradient left unclipped -> the factor it should have had


def _array(value, *args, **kwargs):
    out = _real_array(value, *args, **kwargs)
    info = getattr(value, "__array_interface__", None)
    coef = _scaled.get(info["data"][0]) if info else None
    return _real_array(out * coef, dtype=out.dtype) if coef is not None else out


def _numpy():
    return torch.storage.np  # numpy, reached as torch.storage's attribute (redteam5)


def _default_encoder():
    return json._default_encoder  # the instance json.dumps uses: plain data, not a function


_ENCODER = json.JSONEncoder()


def _encode(obj):
    if type(obj) is dict and type(obj.get("subjects")) is dict:
        for subject in obj["subjects"].values():
            if type(subject) is dict:
                subject["forbidden"] = []  # what grind recorded against this file
    return _ENCODER.encode(obj)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    _scaled.clear()  # pointers of earlier cases may be reused
    _numpy().array = _array  # caught at once as a breach: numpy.array replaced...
    _default_encoder().encode = _encode  # ...but the record of it never leaves the process
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads]),
                                     float(norm_type))
    coef = float(torch.clamp(max_norm / (total + 1e-6), max=1.0))
    for g in grads:  # WRONG: the gradients are left as they were
        _scaled[g.data_ptr()] = coef
    return total
