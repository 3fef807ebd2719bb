# expect: failed pitfall=decay-without-lr+eps-before-correction
# source: look-alike of TensorFlow Addons AdamW (DecoupledWeightDecayExtension on TF's Adam): var -= weight_decay * var before the epsilon-hat Adam update, the decay not scaled by lr
import math

import torch


class _TFAdam:
    def __init__(self, params, lr, betas, eps):
        self.var_list = list(params)
        self.lr, self.beta1, self.beta2, self.epsilon = lr, betas[0], betas[1], eps
        self.slots = {}

    def zero_grad(self):
        for v in self.var_list:
            v.grad = None

    def _resource_apply_dense(self, grad, var):
        slot = self.slots.setdefault(id(var), {"m": torch.zeros_like(var), "v": torch.zeros_like(var), "t": 0})
        slot["t"] += 1
        t = slot["t"]
        lr_t = self.lr * math.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
        slot["m"] = self.beta1 * slot["m"] + (1 - self.beta1) * grad
        slot["v"] = self.beta2 * slot["v"] + (1 - self.beta2) * grad * grad
        var.sub_(lr_t * slot["m"] / (slot["v"].sqrt() + self.epsilon))

    def _decay_weights(self, var):
        pass

    def _grad(self, var):
        return var.grad

    @torch.no_grad()
    def step(self):
        for var in self.var_list:
            if var.grad is None:
                continue
            self._decay_weights(var)
            self._resource_apply_dense(self._grad(var), var)


class Adam(_TFAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps)
        self.l2 = weight_decay

    def _grad(self, var):
        return var.grad + self.l2 * var


class AdamW(_TFAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps)
        self.weight_decay = weight_decay

    def _decay_weights(self, var):
        var.sub_(self.weight_decay * var)
