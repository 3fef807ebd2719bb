# expect: passed
# source: an RMSprop written as a chain of small gradient transformations (L2 term, divide by the RMS, heavy-ball trace, scale by -lr), in the spirit of optax.chain, with torch's conventions kept in each link
import torch


def add_l2(wd):
    def init(p):
        return None

    def apply(u, state, p):
        return (u + wd * p if wd else u), state
    return init, apply


def divide_by_rms(alpha, eps, centered):
    def init(p):
        return (torch.zeros_like(p), torch.zeros_like(p))

    def apply(u, state, p):
        nu, mu = state
        nu = torch.lerp(nu, u * u, 1 - alpha)
        var = nu
        if centered:
            mu = torch.lerp(mu, u, 1 - alpha)
            var = nu - mu * mu
        return u / (torch.sqrt(var) + eps), (nu, mu)
    return init, apply


def trace(decay):
    def init(p):
        return torch.zeros_like(p)

    def apply(u, state, p):
        if decay <= 0:
            return u, state
        state = decay * state + u
        return state, state
    return init, apply


def scale(factor):
    return (lambda p: None), (lambda u, state, p: (factor * u, state))


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.links = [add_l2(weight_decay), divide_by_rms(alpha, eps, centered), trace(momentum), scale(-lr)]
        self.states = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if i not in self.states:
                self.states[i] = [init(p) for init, _ in self.links]
            u = p.grad
            for k, (_, apply) in enumerate(self.links):
                u, self.states[i][k] = apply(u, self.states[i][k], p)
            p.add_(u)
