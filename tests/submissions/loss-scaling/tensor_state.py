# expect: passed
"""Keeps its state in tensors like GradScaler does (float32 scale, int tracker) and checks all
gradients with one stacked reduction."""

import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale_t = torch.tensor(float(init_scale), dtype=torch.float32)
        self.tracker = torch.tensor(0, dtype=torch.int64)
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.growth_interval = growth_interval
        self.state = {}

    def scale(self, loss):
        return loss * self.scale_t

    def unscale_(self, optimizer):
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        inv = self.scale_t.double().reciprocal().float()
        if grads:
            torch._foreach_mul_(grads, inv)
            found = ~torch.stack([torch.isfinite(g).all() for g in grads]).all()
        else:
            found = torch.tensor(False)
        self.state[id(optimizer)] = found
        return found

    def step(self, optimizer):
        if id(optimizer) not in self.state:
            self.unscale_(optimizer)
        if not bool(self.state[id(optimizer)]):
            optimizer.step()

    def update(self):
        found = any(bool(f) for f in self.state.values())
        if found:
            self.scale_t.mul_(self.backoff_factor)
            self.tracker.zero_()
        else:
            self.tracker += 1
            if int(self.tracker) == self.growth_interval:
                self.scale_t.mul_(self.growth_factor)
                self.tracker.zero_()
        self.state.clear()

    def get_scale(self):
        return float(self.scale_t)
