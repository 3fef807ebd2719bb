# expect: failed
# source: near miss, no known mistake: only the default epsilon taken from Keras (1e-7), every other default and the arithmetic torch's; the Keras-defaults pitfall changes lr and alpha too, so it must not be named
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-7, weight_decay=0, momentum=0, centered=False):
        self._p = list(params)
        self._lr, self._a, self._e, self._wd, self._mu, self._c = lr, alpha, eps, weight_decay, momentum, centered
        self._s = {}

    def zero_grad(self):
        for p in self._p:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self._p:
            if p.grad is None:
                continue
            g = p.grad if not self._wd else p.grad.add(p, alpha=self._wd)
            sq, gm, vb = self._s.setdefault(id(p), (torch.zeros_like(p), torch.zeros_like(p), torch.zeros_like(p)))
            sq.mul_(self._a).addcmul_(g, g, value=1 - self._a)
            if self._c:
                gm.mul_(self._a).add_(g, alpha=1 - self._a)
                den = (sq - gm * gm).sqrt() + self._e
            else:
                den = sq.sqrt() + self._e
            if self._mu > 0:
                vb.mul_(self._mu).add_(g / den)
                p.add_(vb, alpha=-self._lr)
            else:
                p.add_(g / den, alpha=-self._lr)
