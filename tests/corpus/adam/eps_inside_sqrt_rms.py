# expect: failed pitfall=eps-inside-sqrt
# source: RMSprop habit (TF1's RMSPropOptimizer puts epsilon under the root), carried over to Adam
import torch


class Adam:
    adamw = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        b1, b2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state.setdefault(id(p), {"t": 0, "m": torch.zeros_like(p), "ms": torch.zeros_like(p)})
            s["t"] += 1
            g = p.grad
            if self.wd:
                if self.adamw:
                    p.mul_(1 - self.lr * self.wd)
                else:
                    g = g + self.wd * p
            s["m"].mul_(b1).add_(g, alpha=1 - b1)
            s["ms"].mul_(b2).add_(g * g, alpha=1 - b2)
            m_hat = s["m"] / (1 - b1 ** s["t"])
            ms_hat = s["ms"] / (1 - b2 ** s["t"])
            p.sub_(self.lr * m_hat / torch.sqrt(ms_hat + self.eps))


class AdamW(Adam):
    adamw = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
