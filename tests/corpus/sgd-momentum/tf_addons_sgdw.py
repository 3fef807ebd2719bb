# expect: failed pitfall=sgdw-decay-without-lr
# source: look-alike of TensorFlow Addons SGDW (DecoupledWeightDecayExtension on MomentumOptimizer): var -= weight_decay * var first, then the momentum update on the raw gradient
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.var_list = list(params)
        self.learning_rate, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.use_nesterov = weight_decay, nesterov
        self.accum = {}

    def zero_grad(self):
        for var in self.var_list:
            var.grad = None

    def _decay_weights_op(self, var):
        if self.weight_decay:
            var.sub_(self.weight_decay * var)

    def _apply_momentum(self, grad, var):
        if not self.momentum:
            var.sub_(self.learning_rate * grad)
            return
        accum = self.accum.get(id(var))
        if accum is None:
            accum = self.accum[id(var)] = grad.clone()
        else:
            accum.mul_(self.momentum).add_(grad, alpha=1 - self.dampening)
        if self.use_nesterov:
            var.sub_(self.learning_rate * (grad + self.momentum * accum))
        else:
            var.sub_(self.learning_rate * accum)

    @torch.no_grad()
    def step(self):
        for var in self.var_list:
            if var.grad is None:
                continue
            self._decay_weights_op(var)
            self._apply_momentum(var.grad, var)
