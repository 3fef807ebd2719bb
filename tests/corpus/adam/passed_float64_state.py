# expect: passed
# source: mixed-precision habit: master state kept in float64 whatever the parameter's dtype, the update cast back at the end
import torch


class Adam:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = [p for p in params]
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad = None

    def step(self):
        b1, b2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            st = self.state.get(p)
            if st is None:
                st = self.state[p] = {"t": 0,
                                      "m": torch.zeros(p.shape, dtype=torch.float64),
                                      "v": torch.zeros(p.shape, dtype=torch.float64)}
            st["t"] += 1
            w = p.detach().to(torch.float64)
            g = p.grad.detach().to(torch.float64)
            if self.wd and not self.decoupled:
                g = g + self.wd * w
            st["m"] = b1 * st["m"] + (1 - b1) * g
            st["v"] = b2 * st["v"] + (1 - b2) * g * g
            m_hat = st["m"] / (1 - b1 ** st["t"])
            v_hat = st["v"] / (1 - b2 ** st["t"])
            if self.wd and self.decoupled:
                w = w * (1 - self.lr * self.wd)
            w = w - self.lr * m_hat / (torch.sqrt(v_hat) + self.eps)
            p.data.copy_(w.to(p.dtype))


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
