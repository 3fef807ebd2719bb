# expect: failed pitfall=decay-after-momentum
# source: look-alike of fastai's SGD (decouple_wd=True by default): weight_decay callback p *= 1 - lr * wd, then average_grad and momentum_step
import torch


def weight_decay_cb(p, lr, wd, **kwargs):
    if wd != 0:
        p.mul_(1 - lr * wd)


def average_grad(p, mom, damp, state, **kwargs):
    if "grad_avg" not in state:
        state["grad_avg"] = p.grad.detach().clone()
    else:
        state["grad_avg"].mul_(mom).add_(p.grad, alpha=1 - damp)


def momentum_step(p, lr, mom, nesterov, state, **kwargs):
    avg = state["grad_avg"]
    p.sub_(lr * (p.grad + mom * avg if nesterov else avg))


def sgd_step(p, lr, **kwargs):
    p.sub_(lr * p.grad)


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.hypers = dict(lr=lr, mom=momentum, damp=dampening, wd=weight_decay, nesterov=nesterov)
        self.cbs = [weight_decay_cb] + ([average_grad, momentum_step] if momentum else [sgd_step])
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            state = self.state.setdefault(p, {})
            for cb in self.cbs:
                cb(p, state=state, **self.hypers)
