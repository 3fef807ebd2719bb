# expect: failed pitfall=step-on-overflow
# source: independent mistake: the overflow only drives the scale; step() hands the gradients to the optimizer whatever unscale_ found
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.factor = float(init_scale)
        self.grow_by, self.shrink_by, self.every = growth_factor, backoff_factor, growth_interval
        self.ok_in_a_row = 0
        self.overflowed = None

    def scale(self, loss):
        return loss * self.factor

    def unscale_(self, optimizer):
        found = torch.zeros((), dtype=torch.bool)
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self.factor)
                    found |= ~torch.isfinite(p.grad).all()
        self.overflowed = bool(found)
        return self.overflowed

    def step(self, optimizer):
        if self.overflowed is None:
            self.unscale_(optimizer)
        optimizer.step()

    def update(self):
        if self.overflowed:
            self.factor *= self.shrink_by
            self.ok_in_a_row = 0
        else:
            self.ok_in_a_row += 1
            if self.ok_in_a_row == self.every:
                self.factor *= self.grow_by
                self.ok_in_a_row = 0
        self.overflowed = None

    def get_scale(self):
        return self.factor
