# hostile (guards and poison, marks): a fifth review of issue 28. torch's maths through another optimizer, set up
# to take this exercise's step; expected verdict now: forbidden (every torch optimizer is named). Before: PASSED for marks.
"""Adam and AdamW. Run `grind run adam` to check your answer."""
# ATTACK: torch's own Adam arithmetic, through two optimizers the adam exercise does not forbid.
# NAdam keeps exactly Adam's exp_avg (lerp by 1 - beta1) and exp_avg_sq, and divides by exactly
# Adam's bias-corrected denominator; with momentum_decay huge its mu is beta1 on every step, so its
# exp_avg term is Adam's once its lr is rescaled per step. NAdam also adds a (1 - mu) * grad / denom
# term: an RMSprop with the same alpha (= beta2), eps * sqrt(bias_correction2) and a negative lr
# takes exactly that term back out. Nothing here computes a moment, a root or a bias correction of
# the moments: the learner code only picks scalar learning rates.
import torch

_MD = 1e9  # 0.96 ** (step * _MD) == 0.0: mu = mu_next = beta1


class _One:
    def __init__(self, p, betas, eps):
        self.p, (self.b1, self.b2), self.eps, self.t = p, betas, eps, 0
        self.n = torch.optim.NAdam([p], lr=1.0, betas=betas, eps=eps, momentum_decay=_MD)
        self.r = torch.optim.RMSprop([p], lr=1.0, alpha=self.b2, eps=eps)

    def step(self, lr):
        self.t += 1
        t, b1, b2 = self.t, self.b1, self.b2
        if b1 == 0:
            self.n.param_groups[0]["lr"] = lr
            self.n.step()
            return
        lr_n = lr * (1 - b1 ** (t + 1)) / (b1 * (1 - b1 ** t))
        c = lr_n * (1 - b1) / (1 - b1 ** t)
        bc2 = 1 - b2 ** t
        self.n.param_groups[0]["lr"] = lr_n
        self.r.param_groups[0]["lr"] = -c * bc2 ** 0.5
        self.r.param_groups[0]["eps"] = self.eps * bc2 ** 0.5
        self.n.step()
        self.r.step()


class Adam:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.wd = lr, weight_decay
        self.one = [_One(p, betas, eps) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p, one in zip(self.params, self.one):
            if p.grad is None:
                continue
            orig = p.grad
            with torch.no_grad():
                if self.wd and self.decoupled:
                    p.mul_(1 - self.lr * self.wd)
                elif self.wd:
                    p.grad = orig + self.wd * p
            one.step(self.lr)
            p.grad = orig


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
