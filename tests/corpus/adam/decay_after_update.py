# expect: failed pitfall=decay-after-step
# source: AdamW written as "Adam step, then weight decay", shrinking the already-updated weights
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _adam(self, p, g):
        b1, b2 = self.betas
        s = self.state.setdefault(id(p), {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)})
        s["t"] += 1
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        m_hat = s["m"] / (1 - b1 ** s["t"])
        v_hat = s["v"] / (1 - b2 ** s["t"])
        p -= self.lr * m_hat / (v_hat.sqrt() + self.eps)

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                self._adam(p, p.grad + self.weight_decay * p)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                self._adam(p, p.grad)
                p -= self.lr * self.weight_decay * p
