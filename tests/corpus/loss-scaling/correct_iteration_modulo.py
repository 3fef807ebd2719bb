# expect: passed
# source: independent answer: an iteration counter and the iteration of the last overflow (initialised to -1), growth when their distance is a multiple of growth_interval
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.cur_scale = float(init_scale)
        self.up, self.down = growth_factor, backoff_factor
        self.window = growth_interval
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.pending = None

    def scale(self, loss):
        return loss * self.cur_scale

    def unscale_(self, optimizer):
        overflow = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad /= self.cur_scale
                        overflow |= not torch.isfinite(p.grad).all().item()
        self.pending = overflow
        return overflow

    def step(self, optimizer):
        if self.pending is None:
            self.unscale_(optimizer)
        if not self.pending:
            optimizer.step()

    def update(self):
        if self.pending:
            self.cur_scale *= self.down
            self.last_overflow_iter = self.cur_iter
        elif (self.cur_iter - self.last_overflow_iter) % self.window == 0:
            self.cur_scale *= self.up
        self.cur_iter += 1
        self.pending = None

    def get_scale(self):
        return self.cur_scale
