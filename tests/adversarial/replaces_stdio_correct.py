# expect: passed
# A correct answer that swaps the interpreter's streams as real training scripts do: output
# re-wrapped to replace what it cannot encode, a noisy import silenced with a StringIO and put
# back from sys.__stdout__, progress written to sys.__stderr__. Cold all of it is harmless; the
# warm server's job once kept sys.__stdout__ as the server's own stream, so its own stdout lost
# its last reference when the submission replaced it, was collected, and closed fd 1: the
# correct answer "crashed the worker" over the daemon, in watch and in `grind grade`.
import io
import sys

import torch

sys.stderr = io.StringIO()
print("a noisy import's warning", file=sys.stderr)
sys.stderr = sys.__stderr__
sys.stdout = io.StringIO()
print("silenced")
sys.stdout = sys.__stdout__
print("restored", file=sys.__stdout__)
print("to the real stderr", file=sys.__stderr__)
# Kept as sys.stdout to the end: a wrapper over the interpreter's buffer closes that buffer when
# it is collected, in any Python, so a script replaces sys.stdout with one only once.
sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace", line_buffering=True)
print("progress bar ready")


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    tensors = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [t.grad for t in tensors if t.grad is not None]
    if len(grads) == 0:
        return torch.tensor(0.0)
    if float(norm_type) == float("inf"):
        total = torch.stack([g.detach().abs().max() for g in grads]).max()
    else:
        flat = torch.cat([g.detach().reshape(-1) for g in grads])
        total = torch.linalg.vector_norm(flat, float(norm_type))
    coefficient = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coefficient.to(g.dtype))
    print(f"total norm {total.item():.3f}", file=sys.__stderr__)
    return total
