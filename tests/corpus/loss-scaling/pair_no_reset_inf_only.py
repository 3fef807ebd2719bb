# expect: failed pitfall=no-reset-on-overflow+inf-only
# source: independent mistake pair: torch.isinf as the overflow test (NaN slips through) and no reset of the clean-step count on overflow
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale_now = float(init_scale)
        self.growth_factor, self.backoff_factor, self.growth_interval = growth_factor, backoff_factor, growth_interval
        self.tracker = 0
        self.inf_seen = None

    def scale(self, loss):
        return loss * self.scale_now

    def unscale_(self, optimizer):
        seen = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self.scale_now)
                    seen = seen or bool(torch.isinf(p.grad).any())
        self.inf_seen = seen
        return seen

    def step(self, optimizer):
        if self.inf_seen is None:
            self.unscale_(optimizer)
        if not self.inf_seen:
            optimizer.step()

    def update(self):
        if self.inf_seen:
            self.scale_now *= self.backoff_factor
        else:
            self.tracker += 1
            if self.tracker == self.growth_interval:
                self.scale_now *= self.growth_factor
                self.tracker = 0
        self.inf_seen = None

    def get_scale(self):
        return self.scale_now
