# expect: failed pitfall=eps-inside-sqrt
import torch


class Adam:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.eps, self.wd = lr, eps, weight_decay
        self.b1, self.b2 = betas
        self.state = [dict(step=0, m=torch.zeros_like(p), v=torch.zeros_like(p)) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p, s in zip(self.params, self.state):
            if p.grad is None:
                continue
            s["step"] += 1
            g = p.grad
            if self.decoupled:
                p.mul_(1 - self.lr * self.wd)
            elif self.wd:
                g = g.add(p, alpha=self.wd)
            s["m"].lerp_(g, 1 - self.b1)
            s["v"].mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
            m_hat = s["m"] / (1 - self.b1 ** s["step"])
            v_hat = s["v"] / (1 - self.b2 ** s["step"])
            p.add_(-self.lr * m_hat / torch.sqrt(v_hat + self.eps))


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)


