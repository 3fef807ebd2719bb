# expect: passed
# source: independent answer: scale and counter held in float32/int tensors like GradScaler, gradients gathered with itertools.chain, found_inf returned as a bool tensor
import itertools

import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._scale = torch.tensor(float(init_scale), dtype=torch.float32)
        self._tracker = torch.zeros((), dtype=torch.int64)
        self._growth, self._backoff, self._interval = growth_factor, backoff_factor, growth_interval
        self._found = None

    def scale(self, loss):
        return loss * self._scale

    @staticmethod
    def _grads(optimizer):
        params = itertools.chain.from_iterable(g["params"] for g in optimizer.param_groups)
        return [p.grad for p in params if p.grad is not None]

    def unscale_(self, optimizer):
        inv = self._scale.double().reciprocal().float()
        found = torch.zeros((), dtype=torch.bool)
        for g in self._grads(optimizer):
            g.mul_(inv)
            found = found | ~torch.isfinite(g).all()
        self._found = found
        return found

    def step(self, optimizer):
        if self._found is None:
            self.unscale_(optimizer)
        if not bool(self._found):
            optimizer.step()

    def update(self):
        if bool(self._found):
            self._scale = self._scale * self._backoff
            self._tracker.zero_()
        else:
            self._tracker += 1
            if int(self._tracker) == self._interval:
                self._scale = self._scale * self._growth
                self._tracker.zero_()
        self._found = None

    def get_scale(self):
        return float(self._scale)
