# expect: failed pitfall=step-does-not-unscale
# source: independent mistake: when unscale_() was skipped, step() only looks for inf/NaN in the still-scaled gradients and steps with them
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.loss_scale = float(init_scale)
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.growth_interval = growth_interval
        self.clean_steps = 0
        self.found_inf = None

    def _all_grads(self, optimizer):
        for group in optimizer.param_groups:
            yield from (p.grad for p in group["params"] if p.grad is not None)

    def scale(self, loss):
        return loss * self.loss_scale

    def unscale_(self, optimizer):
        grads = list(self._all_grads(optimizer))
        for g in grads:
            g.div_(self.loss_scale)
        self.found_inf = any(not torch.isfinite(g).all() for g in grads)
        return self.found_inf

    def step(self, optimizer):
        if self.found_inf is None:
            self.found_inf = any(not torch.isfinite(g).all() for g in self._all_grads(optimizer))
        if not self.found_inf:
            optimizer.step()

    def update(self):
        if self.found_inf:
            self.loss_scale *= self.backoff_factor
            self.clean_steps = 0
        else:
            self.clean_steps += 1
            if self.clean_steps == self.growth_interval:
                self.loss_scale *= self.growth_factor
                self.clean_steps = 0
        self.found_inf = None

    def get_scale(self):
        return self.loss_scale
