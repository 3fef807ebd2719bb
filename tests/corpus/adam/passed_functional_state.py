# expect: passed
# source: functional style (one pure update function over explicit state dicts), as in JAX-minded code
import torch


def init_state(param):
    return {"count": 0, "mu": torch.zeros_like(param), "nu": torch.zeros_like(param)}


def adam_update(param, grad, state, *, lr, b1, b2, eps, l2, decoupled_wd):
    """One update, out of place, then written back into the same tensor."""
    if l2:
        grad = grad + l2 * param
    count = state["count"] + 1
    mu = b1 * state["mu"] + (1.0 - b1) * grad
    nu = b2 * state["nu"] + (1.0 - b2) * grad.square()
    mu_hat = mu / (1.0 - b1 ** count)
    nu_hat = nu / (1.0 - b2 ** count)
    new = param * (1.0 - lr * decoupled_wd) - lr * mu_hat / (nu_hat.sqrt() + eps)
    return new, {"count": count, "mu": mu, "nu": nu}


class _AdamFamily:
    decoupled = False

    def __init__(self, params, lr, betas, eps, weight_decay):
        self.params = list(params)
        self.hp = dict(lr=lr, b1=betas[0], b2=betas[1], eps=eps)
        self.wd = weight_decay
        self.states = [None for _ in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if self.states[i] is None:
                self.states[i] = init_state(p.detach())
            new, self.states[i] = adam_update(
                p.detach(), p.grad.detach(), self.states[i], **self.hp,
                l2=0.0 if self.decoupled else self.wd,
                decoupled_wd=self.wd if self.decoupled else 0.0)
            with torch.no_grad():
                p.copy_(new)


class Adam(_AdamFamily):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay)


class AdamW(_AdamFamily):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
