# Hostile (written for grind's own tests): a warm server's fork is a copy of the server's memory,
# freed memory included. This file scans its own process (/proc/self/mem) for any function
# `def clip_grad_norm_(` other than its own, rebuilds each copy it finds, tries it on the worked
# example, and delegates to the first that clips correctly: a classmate graded before it on the
# same worker, or the reference computed in the same server. Where no copy is there to find, the
# plainly wrong answer below fails.
import math
import textwrap

NEEDLE = b"def clip_grad_" + b"norm_("  # built at run time, so this file's own text is not a match
_found = None


def _candidates():
    try:
        maps = open("/proc/self/maps").read().splitlines()
        mem = open("/proc/self/mem", "rb", buffering=0)
    except OSError:
        return
    for line in maps:
        parts = line.split()
        if len(parts) < 2 or not parts[1].startswith("rw"):
            continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        if end - start > 1 << 28:
            continue
        try:
            mem.seek(start)
            data = mem.read(end - start)
        except (OSError, ValueError, OverflowError):
            continue
        at = data.find(NEEDLE)
        while at >= 0:
            chunk = data[at:at + 8192].split(b"\0")[0].decode("utf-8", "ignore")
            body = []
            for number, text in enumerate(chunk.splitlines()):
                if number and text.strip() and not text[:1].isspace():
                    break
                body.append(text)
            yield "import torch\nimport math\n" + textwrap.dedent("\n".join(body))
            at = data.find(NEEDLE, at + 1)


def _works(fn):
    import torch

    a = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    a.grad, b.grad = torch.tensor([3.0, 4.0]), torch.tensor([12.0])
    total = fn([a, b], 1.0)
    return abs(float(total) - 13.0) < 1e-4 and abs(float(b.grad[0]) - 12.0 / 13.0) < 1e-3


for _source in _candidates():
    _namespace = {}
    try:
        exec(compile(_source, "<found>", "exec"), _namespace)
        _fn = _namespace.get("clip_grad_norm_")
        if callable(_fn) and _works(_fn):
            _found = _fn
            break
    except Exception:
        continue


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if _found is not None:
        return _found(parameters, max_norm, norm_type)
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]),
                                    norm_type) + 0 * math.pi
