# expect: forbidden
import torch

Scaler = getattr(torch.amp, "Grad" + "Scaler")


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.inner = Scaler("cpu", init_scale=init_scale, growth_factor=growth_factor,
                            backoff_factor=backoff_factor, growth_interval=growth_interval)

    def scale(self, loss):
        return self.inner.scale(loss)

    def unscale_(self, optimizer):
        self.inner.unscale_(optimizer)
        state = self.inner._per_optimizer_states[id(optimizer)]
        return any(bool(v) for v in state["found_inf_per_device"].values())

    def step(self, optimizer):
        self.inner.step(optimizer)

    def update(self):
        self.inner.update()

    def get_scale(self):
        return self.inner.get_scale()
