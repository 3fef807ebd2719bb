"""Reference: RMSprop with alpha, eps, weight decay, momentum and the centered variant, matching
torch.optim.RMSprop."""

import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)  # model.parameters() is a generator: read it once, here
        self.lr, self.alpha, self.eps = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        # Per-parameter state, created the first time that parameter has a gradient.
        self.state = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None  # torch's default; None also means "skip me" in step()

    def _new_state(self, p):
        # Every running average starts at zero (TensorFlow 1 started the mean square at one).
        state = {"square_avg": torch.zeros_like(p)}
        if self.centered:
            state["grad_avg"] = torch.zeros_like(p)
        if self.momentum > 0:
            state["buf"] = torch.zeros_like(p)
        return state

    @torch.no_grad()  # parameters are leaves that require grad: update them outside autograd
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue  # no gradient: no update, and none of its averages decay either
            if self.state[i] is None:
                self.state[i] = self._new_state(p)
            state, g = self.state[i], p.grad
            if self.weight_decay:
                g = g + self.weight_decay * p  # L2: the decay joins the gradient, and so the averages

            # Running mean of g**2: the old average keeps alpha, the new square gets 1 - alpha.
            square_avg = state["square_avg"]
            square_avg.mul_(self.alpha).addcmul_(g, g, value=1 - self.alpha)

            if self.centered:
                # Centered: normalise by an estimate of the variance, E[g^2] - E[g]^2, which needs
                # a running mean of g itself, with the same alpha.
                grad_avg = state["grad_avg"]
                grad_avg.mul_(self.alpha).add_(g, alpha=1 - self.alpha)
                rms = (square_avg - grad_avg * grad_avg).sqrt()
            else:
                rms = square_avg.sqrt()
            denom = rms + self.eps  # eps is added after the square root

            if self.momentum > 0:
                # The velocity accumulates the normalised step g / denom, not the raw gradient.
                buf = state["buf"]
                buf.mul_(self.momentum).add_(g / denom)
                p.sub_(self.lr * buf)
            else:
                p.sub_(self.lr * g / denom)
