# expect: crashed|failed
# Attacks the parent's trust in the result's shape: forges result.json with the run's real
# token and a valid (empty) observations file and hash, but no "subjects" at all (the learner's
# record sits under a misspelled key). Must be a crash verdict naming a malformed result, never
# grind's internal error. With no token to find, the wrong answer below fails.
import json
import os
import sys


def _find_token():
    """The token and output folder: a runner frame's locals, a job dict, or any dict in gc."""
    import gc

    seen = set()
    for top in list(sys._current_frames().values()):
        frame = top
        while frame is not None and id(frame) not in seen:
            seen.add(id(frame))
            scope = dict(frame.f_locals)
            if isinstance(scope.get("token"), str):
                return scope["token"], scope.get("out_dir")
            for value in scope.values():
                if isinstance(value, dict) and isinstance(value.get("token"), str):
                    return value["token"], value.get("out_dir")
            frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict) and isinstance(obj.get("token"), str) and len(obj["token"]) >= 16:
            return obj["token"], obj.get("out_dir")
    return None, None


try:
    token, out_dir = _find_token()
    if token:
        import hashlib

        from safetensors.numpy import save

        folder = out_dir or os.getcwd()
        raw = save({})  # a valid, empty observations file with its true hash: only the JSON lies
        with open(os.path.join(folder, "observations.safetensors"), "wb") as handle:
            handle.write(raw)
        digest = hashlib.sha256(raw).hexdigest()
        forged = {"token": token, "observations_sha256": digest, "instances": [], "pitfalls": [],
                  "subject": {"learner": {"load_error": None, "cases": {}, "forbidden": []}}}
        with open(os.path.join(folder, "result.json"), "w") as handle:
            handle.write(forged if isinstance(forged, str) else json.dumps(forged))
        sys.stdout.flush()
        os._exit(0)
except (OSError, ImportError):
    pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    # The attack failed: a plainly wrong answer (right norm, gradients never scaled).
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    return torch.linalg.vector_norm(norms, float(norm_type))
