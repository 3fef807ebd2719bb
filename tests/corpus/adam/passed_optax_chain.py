# expect: passed
# source: look-alike of optax.chain(scale_by_adam, add_decayed_weights, scale_by_learning_rate): updates as composable transformations
import torch


def scale_by_adam(b1, b2, eps):
    def init(p):
        return {"count": 0, "mu": torch.zeros_like(p), "nu": torch.zeros_like(p)}

    def update(u, state, p):
        count = state["count"] + 1
        mu = torch.lerp(state["mu"], u, 1 - b1)
        nu = torch.lerp(state["nu"], u * u, 1 - b2)
        out = (mu / (1 - b1 ** count)) / ((nu / (1 - b2 ** count)).sqrt() + eps)
        return out, {"count": count, "mu": mu, "nu": nu}
    return init, update


def add_decayed_weights(wd):
    return (lambda p: {}), (lambda u, state, p: (u + wd * p, state))


def scale(factor):
    return (lambda p: {}), (lambda u, state, p: (u * factor, state))


def chain(*transforms):
    def init(p):
        return [t[0](p) for t in transforms]

    def update(u, states, p):
        new_states = []
        for (_, fn), s in zip(transforms, states):
            u, s = fn(u, s, p)
            new_states.append(s)
        return u, new_states
    return init, update


class _Optax:
    def __init__(self, params, transform):
        self.params = list(params)
        self.init, self.update = transform
        self.states = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            key = id(p)
            if key not in self.states:
                self.states[key] = self.init(p)
            u, self.states[key] = self.update(p.grad, self.states[key], p.detach().clone())
            p.add_(u)


class Adam(_Optax):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        # L2: decay joins the gradient before Adam sees it
        super().__init__(params, chain(add_decayed_weights(weight_decay), scale_by_adam(*betas, eps), scale(-lr)))


class AdamW(_Optax):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        # optax.adamw: the decay is added to Adam's direction, then everything is scaled by -lr
        super().__init__(params, chain(scale_by_adam(*betas, eps), add_decayed_weights(weight_decay), scale(-lr)))
