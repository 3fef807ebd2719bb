# expect: failed pitfall=params-generator-consumed
# source: state built from the params argument in __init__ and the same generator kept for later loops
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = params
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {id(p): {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)} for p in params}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _decoupled(self):
        return False

    @torch.no_grad()
    def step(self):
        b1, b2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state[id(p)]
            s["t"] += 1
            g = p.grad
            if self.weight_decay:
                if self._decoupled():
                    p.mul_(1 - self.lr * self.weight_decay)
                else:
                    g = g + self.weight_decay * p
            s["m"].mul_(b1).add_(g, alpha=1 - b1)
            s["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
            m_hat = s["m"] / (1 - b1 ** s["t"])
            v_hat = s["v"] / (1 - b2 ** s["t"])
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _decoupled(self):
        return True
