# expect: forbidden
# Trick: both optimizers are compiled from a string under torch's own file name
# (torch/optim/adam.py), with their own globals, and keep torch's optimizer inside. Nothing on the
# stack carries this file's name; the old guard looked for exactly that.
import torch

_SOURCE = '''
class _Delegate:
    name = None

    def __init__(self, params, **options):
        self.inner = getattr(optim, self.name)(params, **options)

    def zero_grad(self):
        self.inner.zero_grad()

    def step(self):
        self.inner.step()


class Adam(_Delegate):
    name = "Ad" + "am"


class AdamW(_Delegate):
    name = "Ad" + "amW"
'''

_where = torch.__file__.replace("__init__.py", "optim/adam.py")
_scope = {"optim": torch.optim, "__name__": "torch.optim.adam"}
exec(compile(_SOURCE, _where, "exec"), _scope)
Adam, AdamW = _scope["Adam"], _scope["AdamW"]
