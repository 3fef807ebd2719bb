# expect: failed pitfall=fixed-factors+max-scale+unscale-stops-at-overflow
# source: look-alike of apex.amp's LossScaler (dynamic): init min(max_loss_scale=2**24, init_scale), unscale_python breaking at the first overflowing tensor (checked before it is unscaled), update_scale halving/doubling with the 2**24 cap
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._max_loss_scale = 2.0 ** 24
        self._loss_scale = min(self._max_loss_scale, init_scale)
        self._scale_seq_len = growth_interval
        self._unskipped = 0
        self._has_overflow = False
        self._unscaled = False

    def scale(self, loss):
        return loss.float() * self._loss_scale

    @staticmethod
    def _check_and_unscale(grad, scale):
        cpu_sum = float(grad.float().sum())
        if cpu_sum == float("inf") or cpu_sum == -float("inf") or cpu_sum != cpu_sum:
            return True
        grad.mul_(scale)
        return False

    def unscale_(self, optimizer):
        self._has_overflow = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._has_overflow = self._check_and_unscale(p.grad, 1.0 / self._loss_scale)
                    if self._has_overflow:
                        break
            if self._has_overflow:
                break
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
            self._loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            self._unskipped = 0
        self._has_overflow = False
        self._unscaled = False

    def get_scale(self):
        return self._loss_scale
