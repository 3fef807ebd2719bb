# expect: failed pitfall=fixed-factors
# source: look-alike of apex.amp's LossScaler.update_scale: hard-coded / 2 on overflow and * 2 on growth (its scale_factor is never used); ceiling and early-stop unscaling left out, every gradient unscaled
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._loss_scale = float(init_scale)
        self._scale_seq_len = growth_interval
        self._unskipped = 0
        self._has_overflow = False
        self._unscaled = False

    def scale(self, loss):
        return loss.float() * self._loss_scale

    @staticmethod
    def _check_and_unscale(grad, scale):
        grad.mul_(scale)
        return not bool(torch.isfinite(grad).all())

    def unscale_(self, optimizer):
        self._has_overflow = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    bad = self._check_and_unscale(p.grad, 1.0 / self._loss_scale)
                    self._has_overflow = self._has_overflow or bad
        self._unscaled = True
        return self._has_overflow

    def step(self, optimizer):
        if not self._unscaled:
            self.unscale_(optimizer)
        if not self._has_overflow:
            optimizer.step()

    def update(self):
        if self._has_overflow:
            self._loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._loss_scale = self._loss_scale * 2.0
            self._unskipped = 0
        self._has_overflow = False
        self._unscaled = False

    def get_scale(self):
        return self._loss_scale
