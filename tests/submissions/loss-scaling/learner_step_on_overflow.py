# expect: failed pitfall=step-on-overflow
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.value = init_scale
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.count = 0
        self.inf_seen = None

    def scale(self, loss):
        return loss * self.value

    def unscale_(self, optimizer):
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        for grad in grads:
            grad.div_(self.value)
        self.inf_seen = any(not torch.isfinite(grad).all() for grad in grads)
        return self.inf_seen

    def step(self, optimizer):
        if self.inf_seen is None:
            self.unscale_(optimizer)
        optimizer.step()   # update() will shrink the scale if something overflowed

    def update(self):
        if self.inf_seen:
            self.value *= self.backoff_factor
            self.count = 0
        else:
            self.count += 1
            if self.count == self.growth_interval:
                self.value *= self.growth_factor
                self.count = 0
        self.inf_seen = None

    def get_scale(self):
        return self.value
