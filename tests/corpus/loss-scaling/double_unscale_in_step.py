# expect: failed pitfall=double-unscale
# source: independent mistake: step() always runs the unscaling helper, without remembering that unscale_() already ran this iteration
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._s = float(init_scale)
        self._cfg = (float(growth_factor), float(backoff_factor), int(growth_interval))
        self._streak = 0
        self._inf = False

    def scale(self, loss):
        return loss * self._s

    def unscale_(self, optimizer):
        self._inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self._s)
                    self._inf = self._inf or not bool(torch.isfinite(p.grad).all())
        return self._inf

    def step(self, optimizer):
        if not self.unscale_(optimizer):
            optimizer.step()

    def update(self):
        grow, back, every = self._cfg
        if self._inf:
            self._s *= back
            self._streak = 0
        else:
            self._streak += 1
            if self._streak == every:
                self._s *= grow
                self._streak = 0
        self._inf = False

    def get_scale(self):
        return self._s
