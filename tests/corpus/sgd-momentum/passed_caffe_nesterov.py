# expect: passed
# source: look-alike of Caffe's SGDSolver/NesterovSolver: history h = mu * h + lr * g, Nesterov update (1 + mu) * h_new - mu * h_old; equal to torch at a constant lr
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.base_lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.history = {}

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.detach_()
                p.grad.zero_()

    def step(self):
        lr = self.base_lr
        for p in self.params:
            if p.grad is None:
                continue
            diff = p.grad.data.clone()
            if self.weight_decay:
                diff.add_(p.data, alpha=self.weight_decay)  # Regularize
            if not self.momentum:
                p.data.add_(diff, alpha=-lr)
                continue
            h_old = self.history.get(p)
            if h_old is None:
                h_new = lr * diff
            else:
                h_new = self.momentum * h_old + (1 - self.dampening) * lr * diff
            self.history[p] = h_new
            if self.nesterov:
                prev = torch.zeros_like(h_new) if h_old is None else h_old
                p.data.sub_((1 + self.momentum) * h_new - self.momentum * prev)
            else:
                p.data.sub_(h_new)
