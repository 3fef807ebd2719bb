# expect: failed
# Nests 3000 folders in its run folder (their paths pass PATH_MAX) and locks one with chmod 0,
# then gives a plainly wrong answer. Removing the run folder used to recurse (os.walk,
# shutil.rmtree) into a RecursionError: grind's internal error, the attempt unrecorded, the run's
# files left on disk for good. The verdict must be the wrong answer's, and nothing left behind.
import os

_fd = os.open(".", os.O_RDONLY)
try:
    for _ in range(3000):
        os.mkdir("d", dir_fd=_fd)
        _child = os.open("d", os.O_RDONLY, dir_fd=_fd)
        os.close(_fd)
        _fd = _child
    with open(os.open("deepest.txt", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=_fd), "w") as _handle:
        _handle.write("left behind?")
finally:
    os.close(_fd)
os.mkdir("locked")
with open("locked/file", "w") as _handle:
    _handle.write("left behind?")
try:
    os.chmod("locked", 0)
except PermissionError:  # the sandbox's filter refuses a file's mode (limits-only still allows it)
    pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
