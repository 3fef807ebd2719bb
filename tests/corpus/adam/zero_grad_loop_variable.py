# expect: failed pitfall=zero-grad-rebinds-local
# source: zero_grad that collects the gradients and sets the loop variable to None
import torch


class Adam:
    wd_mode = "l2"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.t = [0 for _ in self.params]
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        grads = [p.grad for p in self.params]
        for g in grads:
            if g is not None:
                g = None

    @torch.no_grad()
    def step(self):
        b1, b2 = self.betas
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            if self.wd_mode == "l2":
                g = g + self.weight_decay * p
            else:
                p.mul_(1 - self.lr * self.weight_decay)
            self.t[i] += 1
            self.m[i].mul_(b1).add_(g, alpha=1 - b1)
            self.v[i].mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = self.m[i] / (1 - b1 ** self.t[i])
            v_hat = self.v[i] / (1 - b2 ** self.t[i])
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))


class AdamW(Adam):
    wd_mode = "decoupled"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
