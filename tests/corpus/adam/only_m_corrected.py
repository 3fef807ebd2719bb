# expect: failed pitfall=second-moment-uncorrected
# source: bias correction applied to the momentum term only, the denominator left as sqrt(v)
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.eps, self.weight_decay = lr, eps, weight_decay
        self.beta1, self.beta2 = betas
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _grad(self, p):
        return p.grad + self.weight_decay * p if self.weight_decay else p.grad

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            if id(p) not in self.state:
                self.state[id(p)] = (torch.zeros_like(p), torch.zeros_like(p), [0])
            m, v, t = self.state[id(p)]
            t[0] += 1
            g = self._grad(p)
            m.mul_(self.beta1).add_((1 - self.beta1) * g)
            v.mul_(self.beta2).add_((1 - self.beta2) * g * g)
            m_hat = m / (1 - self.beta1 ** t[0])
            p.add_(-self.lr * m_hat / (v.sqrt() + self.eps))


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _grad(self, p):
        p.mul_(1 - self.lr * self.weight_decay)
        return p.grad
