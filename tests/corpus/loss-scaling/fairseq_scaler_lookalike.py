# expect: failed pitfall=single-scale-factor
# source: look-alike of fairseq's optim/dynamic_loss_scaler.py DynamicLossScaler (scale_factor, scale_window, tolerance=0.0, threshold=None): overflow divides by scale_factor, growth multiplies by it; check_overflow's bookkeeping folded into update()
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.loss_scale = init_scale
        self.scale_factor = growth_factor   # fairseq has no separate backoff factor
        self.scale_window = growth_interval
        self.tolerance = 0.0
        self._iter = 0
        self._last_overflow_iter = -1
        self._last_rescale_iter = -1
        self._overflows_since_rescale = 0
        self._overflow = None

    def scale(self, loss):
        return loss * self.loss_scale

    def unscale_(self, optimizer):
        norm_sq = 0.0
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(1.0 / self.loss_scale)
                    norm_sq += float(p.grad.double().pow(2).sum())
        # fairseq checks the gradient norm: inf or NaN means overflow
        self._overflow = norm_sq == float("inf") or norm_sq != norm_sq
        return self._overflow

    def step(self, optimizer):
        if self._overflow is None:
            self.unscale_(optimizer)
        if not self._overflow:
            optimizer.step()

    def update(self):
        if self._overflow:
            iter_since_rescale = self._iter - self._last_rescale_iter
            self._last_overflow_iter = self._iter
            self._overflows_since_rescale += 1
            if self._overflows_since_rescale / float(iter_since_rescale) >= self.tolerance:
                self.loss_scale /= self.scale_factor
                self._last_rescale_iter = self._iter
                self._overflows_since_rescale = 0
        elif (self._iter - self._last_overflow_iter) % self.scale_window == 0:
            self.loss_scale *= self.scale_factor
            self._last_rescale_iter = self._iter
        self._iter += 1
        self._overflow = None

    def get_scale(self):
        return self.loss_scale
