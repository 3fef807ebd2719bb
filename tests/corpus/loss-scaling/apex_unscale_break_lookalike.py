# expect: failed pitfall=unscale-stops-at-overflow
# source: look-alike of apex.amp's unscale_python: each tensor's sum is checked for inf/NaN before it is unscaled and the loop breaks on the first overflow; the scale policy is GradScaler's
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.loss_scale = float(init_scale)
        self.growth_factor, self.backoff_factor, self.growth_interval = growth_factor, backoff_factor, growth_interval
        self.unskipped = 0
        self.has_overflow = None

    def scale(self, loss):
        return loss * self.loss_scale

    def unscale_(self, optimizer):
        self.has_overflow = False
        grads = (p.grad for g in optimizer.param_groups for p in g["params"])
        for grad in grads:
            if grad is None:
                continue
            total = float(grad.float().sum())
            if total != total or abs(total) == float("inf"):
                self.has_overflow = True
                break
            grad.mul_(1.0 / self.loss_scale)
        return self.has_overflow

    def step(self, optimizer):
        if self.has_overflow is None:
            self.unscale_(optimizer)
        if not self.has_overflow:
            optimizer.step()

    def update(self):
        if self.has_overflow:
            self.loss_scale *= self.backoff_factor
            self.unskipped = 0
        else:
            self.unskipped += 1
            if self.unskipped == self.growth_interval:
                self.loss_scale *= self.growth_factor
                self.unskipped = 0
        self.has_overflow = None

    def get_scale(self):
        return self.loss_scale
