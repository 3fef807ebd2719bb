# expect: failed pitfall=counter-per-parameter
# source: one self.t for the optimizer, incremented inside the loop over parameters
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.eps, self.weight_decay = lr, eps, weight_decay
        self.b1, self.b2 = betas
        self.t = 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _decay(self, p, g):
        return g.add(p, alpha=self.weight_decay) if self.weight_decay else g

    @torch.no_grad()
    def step(self):
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            self.t += 1
            g = self._decay(p, p.grad)
            m.mul_(self.b1).add_(g, alpha=1 - self.b1)
            v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
            denom = (v / (1 - self.b2 ** self.t)).sqrt().add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / (1 - self.b1 ** self.t))


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _decay(self, p, g):
        p.mul_(1 - self.lr * self.weight_decay)
        return g
