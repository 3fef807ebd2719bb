# expect: crashed|failed
# Attacks the parent's reading of the result: forges result.json with the run's real token
# (found in the runner's frames) and makes observations.safetensors a symlink to /dev/zero,
# then os._exit(0). A parent that reads the whole file never reaches its end and eats memory
# until it dies. Refused (a link, not a regular file) it is a crash; with no token to find,
# the wrong answer below fails.
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
        folder = out_dir or os.getcwd()
        observations = os.path.join(folder, "observations.safetensors")
        if os.path.lexists(observations):
            os.remove(observations)
        os.symlink("/dev/zero", observations)
        forged = {"token": token, "observations_sha256": "0" * 64, "instances": [], "pitfalls": [],
                  "subjects": {"learner": {"load_error": None, "cases": {}, "forbidden": [], "elapsed_s": 0.01}}}
        with open(os.path.join(folder, "result.json"), "w") as handle:
            json.dump(forged, handle)
        sys.stdout.flush()
        os._exit(0)
except OSError:
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
