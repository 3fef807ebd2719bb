# expect: failed pitfall=unscale-stops-after-overflow
# source: independent mistake: unscale_ divides a gradient, checks it, and returns as soon as one is bad ("no need to look further"), leaving the later gradients scaled
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.value = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.good_steps = 0
        self.result = None

    def scale(self, loss):
        return loss * self.value

    def _unscale(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self.value)
                if not torch.isfinite(p.grad).all():
                    return True
        return False

    def unscale_(self, optimizer):
        self.result = self._unscale(optimizer)
        return self.result

    def step(self, optimizer):
        if self.result is None:
            self.unscale_(optimizer)
        if not self.result:
            optimizer.step()

    def update(self):
        if self.result:
            self.value *= self.backoff_factor
            self.good_steps = 0
        else:
            self.good_steps += 1
            if self.good_steps == self.growth_interval:
                self.value *= self.growth_factor
                self.good_steps = 0
        self.result = None

    def get_scale(self):
        return self.value
