# Hostile (written for grind's own tests): a speed run (`grind run`, practice) used to carry the
# reference's source in the job, and the child left it in linecache under "<reference>". This
# file looks everywhere the reference could be left in its own process or run folder: linecache,
# sys.modules, every live function's code, the staged file in the run folder, and the process's
# own memory (/proc/self/mem), including freed memory. If it finds the reference it runs it;
# otherwise the plainly wrong answer below fails.
import gc
import linecache
import os
import sys

HEAD = b'"""Reference: ' + b"global-norm gradient clipping"  # built at run time: not in this file's text
_found = None


def _use(source):
    global _found
    namespace = {"__name__": "stolen"}
    try:
        exec(compile(source, "<stolen>", "exec"), namespace)
    except Exception:
        return False
    if callable(namespace.get("clip_grad_norm_")):
        _found = namespace["clip_grad_norm_"]
        return True
    return False


def _from_linecache():
    for name, entry in list(linecache.cache.items()):
        if "reference" in str(name) and len(entry) > 2 and _use("".join(entry[2])):
            return True
    return False


def _from_modules():
    for name, module in list(sys.modules.items()):
        if "reference" in name and callable(getattr(module, "clip_grad_norm_", None)):
            global _found
            _found = module.clip_grad_norm_
            return True
    return False


def _from_functions():
    global _found
    for obj in gc.get_objects():
        if type(obj).__name__ == "function" and obj.__name__ == "clip_grad_norm_" \
                and "reference" in obj.__code__.co_filename:
            _found = obj
            return True
    return False


def _from_files():
    for root in {os.getcwd(), os.environ.get("HOME", ""), "/tmp"}:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            if "reference" in name:
                try:
                    with open(os.path.join(root, name), encoding="utf-8") as handle:
                        if _use(handle.read()):
                            return True
                except OSError:
                    pass
    return False


def _from_memory():
    try:
        maps = open("/proc/self/maps").read().splitlines()
        mem = open("/proc/self/mem", "rb", buffering=0)
    except OSError:
        return False
    mine = id(HEAD)
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
        at = data.find(HEAD)
        while at >= 0:
            if not (mine <= start + at < mine + 128):  # not the needle itself
                tail = data[at:at + 4096].split(b"\0")[0]
                try:
                    if _use(tail.decode("utf-8")):
                        return True
                except UnicodeDecodeError:
                    pass
            at = data.find(HEAD, at + 1)
    return False


for _attempt in (_from_linecache, _from_modules, _from_functions, _from_files, _from_memory):
    try:
        if _attempt():
            break
    except Exception:
        pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if _found is not None:
        return _found(parameters, max_norm, norm_type)
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
