# expect: failed pitfall=fairseq-adam
# source: look-alike of Keras 3's Adam: epsilon-hat form (alpha = lr * sqrt(1 - b2^t) / (1 - b1^t)) and the base optimizer's decoupled weight_decay, for Adam and AdamW alike
import math

import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.variables = list(params)
        self.learning_rate, (self.beta_1, self.beta_2), self.epsilon = lr, betas, eps
        self.weight_decay = weight_decay
        self.momentums, self.velocities, self.iterations = {}, {}, {}

    def zero_grad(self):
        for var in self.variables:
            var.grad = None

    def _apply_weight_decay(self, var):
        if self.weight_decay:
            var.sub_(var * self.weight_decay * self.learning_rate)

    def update_step(self, gradient, var):
        key = id(var)
        if key not in self.momentums:
            self.momentums[key] = torch.zeros_like(var)
            self.velocities[key] = torch.zeros_like(var)
            self.iterations[key] = 0
        self.iterations[key] += 1
        local_step = self.iterations[key]
        beta_1_power = self.beta_1 ** local_step
        beta_2_power = self.beta_2 ** local_step
        m, v = self.momentums[key], self.velocities[key]
        alpha = self.learning_rate * math.sqrt(1 - beta_2_power) / (1 - beta_1_power)
        m.add_((gradient - m) * (1 - self.beta_1))
        v.add_((gradient.square() - v) * (1 - self.beta_2))
        var.sub_(alpha * m / (v.sqrt() + self.epsilon))

    @torch.no_grad()
    def step(self):
        for var in self.variables:
            if var.grad is None:
                continue
            self._apply_weight_decay(var)
            self.update_step(var.grad, var)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
