# expect: failed pitfall=double-unscale
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.cur_scale = init_scale
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.streak = 0
        self.has_inf = False

    def scale(self, loss):
        return loss * self.cur_scale

    def unscale_(self, optimizer):
        self.has_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self.cur_scale)
                    if not torch.isfinite(p.grad).all():
                        self.has_inf = True
        return self.has_inf

    def step(self, optimizer):
        if not self.unscale_(optimizer):
            optimizer.step()

    def update(self):
        if self.has_inf:
            self.cur_scale *= self.backoff_factor
            self.streak = 0
        else:
            self.streak += 1
            if self.streak >= self.growth_interval:
                self.cur_scale *= self.growth_factor
                self.streak = 0

    def get_scale(self):
        return self.cur_scale
