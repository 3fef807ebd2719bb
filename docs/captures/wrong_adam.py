"""Reference: Adam and AdamW, matching torch.optim.Adam and torch.optim.AdamW."""

import torch


class Adam:
    """Adam with L2 weight decay folded into the gradient (what torch.optim.Adam does)."""

    decoupled = False  # AdamW flips this: decay the weights directly instead

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)  # a generator such as model.parameters() can be read only once
        self.lr, self.eps, self.weight_decay = lr, eps, weight_decay
        self.beta1, self.beta2 = betas
        # Per-parameter state, created the first time a parameter has a gradient.
        self.state = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None  # torch's default (set_to_none=True); None also means "skip me" in step()

    @torch.no_grad()  # parameters are leaves that require grad: update them outside autograd
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue  # no gradient: no update, and this parameter's clock does not tick
            if self.state[i] is None:
                self.state[i] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            state = self.state[i]
            state["t"] += 1  # t = 1 on the first update, so 1 - beta**t is never 0
            t, g = state["t"], p.grad

            if self.weight_decay:
                if self.decoupled:
                    p.mul_(1 - self.lr * self.weight_decay)  # AdamW: shrink the weights, scaled by lr
                else:
                    g = g + self.weight_decay * p  # Adam: L2 term joins the gradient (and m, v)

            state["m"].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            state["v"].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)

            # Bias correction: m and v start at 0, so early averages are too small by 1 - beta**t.
            m_hat = state["m"] / (1 - self.beta1 ** t)
            v_hat = state["v"] / (1 - self.beta2 ** t)
            # eps goes outside the square root, after bias correction.
            p.sub_(self.lr * m_hat / (v_hat + self.eps).sqrt())


class AdamW(Adam):
    """Adam with decoupled weight decay: p <- p * (1 - lr * wd) before the Adam step."""

    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


