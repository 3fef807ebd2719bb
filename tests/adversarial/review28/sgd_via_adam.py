# hostile (guards and poison, marks): a fifth review of issue 28. torch's maths through another optimizer, set up
# to take this exercise's step; expected verdict now: forbidden (every torch optimizer is named). Before: PASSED for marks.
"""SGD with momentum, like torch.optim.SGD. Run `grind run sgd-momentum` to check your answer."""
# ATTACK: every momentum update is torch.optim.Adam's arithmetic (its exp_avg EMA is the
# velocity, scaled): betas=(momentum, 0) and an eps so large that the denominator is eps, with
# the learning rate rescaled per step by the bias correction. Adam is not in sgd-momentum's
# forbidden list (RMSprop was added after a review routed SGD through it).

import torch

_E = 1e20


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.mu, self.d, self.wd, self.nest = lr, momentum, dampening, weight_decay, nesterov
        self.a = [torch.optim.Adam([p], lr=1.0, betas=(momentum, 0.0), eps=_E) for p in self.params]
        self.b = [torch.optim.Adam([p], lr=1.0, betas=(0.0, 0.0), eps=_E) for p in self.params]
        self.t = [0] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        mu, d = self.mu, self.d
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            orig = p.grad
            if self.wd:
                with torch.no_grad():
                    p.grad = orig + self.wd * p
            if not mu:
                self.b[i].param_groups[0]["lr"] = self.lr * _E
                self.b[i].step()
            else:
                self.t[i] += 1
                t = self.t[i]
                bc1 = 1 - mu ** t
                scale = (1 - d) if t > 1 else 1.0
                lr_buf = self.lr * (mu if self.nest else 1.0)
                self.a[i].param_groups[0]["lr"] = lr_buf * _E * bc1 * scale / (1 - mu)
                g_for_b = p.grad
                self.a[i].step()
                if t == 1 and d:
                    st = self.a[i].state[p]["exp_avg"]
                    st.div_(1 - d)
                if self.nest:
                    p.grad = g_for_b
                    self.b[i].param_groups[0]["lr"] = self.lr * _E
                    self.b[i].step()
            p.grad = orig
