# expect: failed pitfall=eps-inside-sqrt+mean-square-starts-at-one
# source: look-alike of TensorFlow 1's tf.train.RMSPropOptimizer (ApplyRMSProp / ApplyCenteredRMSProp kernels): 'rms' slot filled with ones, epsilon under the square root, lr folded into the momentum slot; written for this project with torch's argument names
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.learning_rate, self.decay, self.epsilon = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        self.slots = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _slots(self, var):
        if var not in self.slots:
            self.slots[var] = {"rms": torch.ones_like(var), "mg": torch.zeros_like(var),
                               "momentum": torch.zeros_like(var)}
        return self.slots[var]

    @torch.no_grad()
    def step(self):
        for var in self.params:
            if var.grad is None:
                continue
            grad = var.grad + self.weight_decay * var
            s = self._slots(var)
            s["rms"] = self.decay * s["rms"] + (1 - self.decay) * grad * grad
            denom = s["rms"]
            if self.centered:
                s["mg"] = self.decay * s["mg"] + (1 - self.decay) * grad
                denom = denom - s["mg"] * s["mg"]
            s["momentum"] = self.momentum * s["momentum"] + self.learning_rate * grad / torch.sqrt(denom + self.epsilon)
            var -= s["momentum"]
