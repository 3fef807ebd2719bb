# expect: failed pitfall=grow-every-step
# source: independent mistake: after a growth the counter is left where it was, so every later clean step grows the scale again
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.s = float(init_scale)
        self.g, self.b, self.n = growth_factor, backoff_factor, growth_interval
        self.run = 0
        self.bad = None

    def scale(self, loss):
        return loss * self.s

    def unscale_(self, optimizer):
        self.bad = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self.s)
                    if not torch.isfinite(p.grad).all():
                        self.bad = True
        return self.bad

    def step(self, optimizer):
        if self.bad is None:
            self.unscale_(optimizer)
        if not self.bad:
            optimizer.step()

    def update(self):
        if self.bad:
            self.s *= self.b
            self.run = 0
        else:
            self.run += 1
            if self.run >= self.n:
                self.s *= self.g
        self.bad = None

    def get_scale(self):
        return self.s
