# expect: forbidden
# Trick: the scaler class is compiled from a string under another file name, with its own
# globals, and keeps torch's GradScaler inside: no frame carries this file's name.
import torch

_CODE = compile('''
class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.inner = make("cpu", init_scale=init_scale, growth_factor=growth_factor,
                          backoff_factor=backoff_factor, growth_interval=growth_interval)

    def scale(self, loss):
        return self.inner.scale(loss)

    def unscale_(self, optimizer):
        self.inner.unscale_(optimizer)
        found = self.inner._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
        return any(bool(v) for v in found.values())

    def step(self, optimizer):
        self.inner.step(optimizer)

    def update(self):
        self.inner.update()

    def get_scale(self):
        return self.inner.get_scale()
''', "/tmp/not_the_learner.py", "exec")

_globals = {"make": getattr(torch.amp, "Grad" + "Scaler")}
exec(_CODE, _globals)
LossScaler = _globals["LossScaler"]
