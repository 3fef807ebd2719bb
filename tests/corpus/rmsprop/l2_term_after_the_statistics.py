# expect: failed pitfall=decay-outside-the-average
# source: independent mistake: the statistics are gathered from the loss's own gradient, and the L2 term joins only the update ("regularisation is part of the step, not of the gradient's scale")
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.ps = list(params)
        self.cfg = (lr, alpha, eps, weight_decay, momentum, centered)
        self.slots = [None] * len(self.ps)

    def zero_grad(self):
        for p in self.ps:
            p.grad = None

    def step(self):
        lr, alpha, eps, wd, mu, centered = self.cfg
        for i, p in enumerate(self.ps):
            if p.grad is None:
                continue
            if self.slots[i] is None:
                self.slots[i] = [torch.zeros_like(p) for _ in range(3)]
            sq, mean, vel = self.slots[i]
            raw = p.grad.detach()
            sq.mul_(alpha).add_((1 - alpha) * raw * raw)
            if centered:
                mean.mul_(alpha).add_((1 - alpha) * raw)
                rms = (sq - mean * mean).sqrt() + eps
            else:
                rms = sq.sqrt() + eps
            full = raw + wd * p.detach()
            if mu:
                vel.mul_(mu).add_(full / rms)
                move = vel
            else:
                move = full / rms
            p.data.add_(-lr * move)
