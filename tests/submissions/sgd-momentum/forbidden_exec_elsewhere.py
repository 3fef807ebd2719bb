# expect: forbidden
# Trick: the optimizer is compiled from a string under a made-up file name and keeps torch's
# own class (the guard's base, not the guard) inside, so the public name's wrapper never runs.
import torch

_SOURCE = """
class SGD:
    def __init__(self, params, **options):
        self._impl = real(params, **options)

    def zero_grad(self):
        self._impl.zero_grad()

    def step(self):
        self._impl.step()
"""

_namespace = {"real": getattr(torch.optim, "S" + "GD").__mro__[1]}
exec(compile(_SOURCE, "<generated>", "exec"), _namespace)
SGD = _namespace["SGD"]
