# expect: passed
# source: independent answer: a pure function computes (new_param, new_state) from (param, grad, state) with out-of-place arithmetic, and the class only stores the returned tuples, in the style of a functional optimizer
import torch


def rms_update(param, grad, state, lr, alpha, eps, wd, mu, centered):
    if wd:
        grad = grad + wd * param
    sq, mean, vel = state
    sq = torch.lerp(grad * grad, sq, alpha)
    if centered:
        mean = torch.lerp(grad, mean, alpha)
        denom = torch.sqrt(sq - mean * mean) + eps
    else:
        denom = torch.sqrt(sq) + eps
    direction = grad / denom
    if mu > 0:
        vel = mu * vel + direction
        direction = vel
    return param - lr * direction, (sq, mean, vel)


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.tensors = list(params)
        self.options = (lr, alpha, eps, weight_decay, momentum, centered)
        self.states = {}

    def zero_grad(self):
        for t in self.tensors:
            if t.grad is not None:
                t.grad.detach_()
                t.grad.zero_()

    def step(self):
        for i, t in enumerate(self.tensors):
            if t.grad is None:
                continue
            old = self.states.get(i)
            if old is None:
                z = torch.zeros_like(t, memory_format=torch.preserve_format).detach()
                old = (z, z.clone(), z.clone())
            new, self.states[i] = rms_update(t.detach(), t.grad.detach(), old, *self.options)
            with torch.no_grad():
                t.copy_(new)
