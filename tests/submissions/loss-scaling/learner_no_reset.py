# expect: failed pitfall=no-reset-on-overflow
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale_factor = init_scale
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.good_steps = 0
        self.unscaled = False
        self.overflow = False

    def scale(self, loss):
        return loss * self.scale_factor

    def unscale_(self, optimizer):
        self.overflow = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad /= self.scale_factor
                if torch.isinf(p.grad).any() or torch.isnan(p.grad).any():
                    self.overflow = True
        self.unscaled = True
        return self.overflow

    def step(self, optimizer):
        if not self.unscaled:
            self.unscale_(optimizer)
        if not self.overflow:
            optimizer.step()

    def update(self):
        if self.overflow:
            self.scale_factor *= self.backoff_factor
        else:
            self.good_steps += 1
            if self.good_steps % self.growth_interval == 0:
                self.scale_factor *= self.growth_factor
        self.unscaled = False
        self.overflow = False

    def get_scale(self):
        return self.scale_factor
