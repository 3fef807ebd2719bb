# expect: failed pitfall=max-scale
# source: look-alike of apex.amp's max_loss_scale=2**24 ceiling (on the initial scale and on every growth), in a scaler that otherwise uses the given factors
import torch


class LossScaler:
    MAX_LOSS_SCALE = 2.0 ** 24

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.s = min(self.MAX_LOSS_SCALE, float(init_scale))
        self.gf, self.bf, self.gi = growth_factor, backoff_factor, growth_interval
        self.unskipped = 0
        self.overflow = None

    def scale(self, loss):
        return loss * self.s

    def unscale_(self, optimizer):
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        torch._foreach_div_(grads, self.s)
        self.overflow = any(bool((~torch.isfinite(x)).any()) for x in grads)
        return self.overflow

    def step(self, optimizer):
        if self.overflow is None:
            self.unscale_(optimizer)
        if not self.overflow:
            optimizer.step()

    def update(self):
        if self.overflow:
            self.s *= self.bf
            self.unskipped = 0
        else:
            self.unskipped += 1
            if self.unskipped == self.gi:
                self.s = min(self.MAX_LOSS_SCALE, self.s * self.gf)
                self.unskipped = 0
        self.overflow = None

    def get_scale(self):
        return self.s
