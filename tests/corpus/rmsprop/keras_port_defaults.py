# expect: failed pitfall=keras-defaults
# source: look-alike of Keras's RMSprop signature (written for this corpus): learning_rate=0.001, rho=0.9, epsilon=1e-7 kept as the defaults when a Keras model's optimizer was ported, the arithmetic itself torch's
import torch


class RMSprop:
    def __init__(self, params, lr=0.001, alpha=0.9, eps=1e-07, weight_decay=0.0, momentum=0.0, centered=False):
        self.variables = [v for v in params]
        self.learning_rate, self.rho, self.epsilon = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        self.velocities, self.average_gradients, self.momentums = {}, {}, {}

    def zero_grad(self):
        for v in self.variables:
            if v.grad is not None:
                v.grad.zero_()

    def step(self):
        with torch.no_grad():
            for i, var in enumerate(self.variables):
                gradient = var.grad
                if gradient is None:
                    continue
                if self.weight_decay:
                    gradient = gradient + self.weight_decay * var
                if i not in self.velocities:
                    self.velocities[i] = torch.zeros_like(var)
                    self.average_gradients[i] = torch.zeros_like(var)
                    self.momentums[i] = torch.zeros_like(var)
                velocity = self.velocities[i]
                velocity.copy_(self.rho * velocity + (1 - self.rho) * gradient ** 2)
                denominator = velocity
                if self.centered:
                    avg = self.average_gradients[i]
                    avg.copy_(self.rho * avg + (1 - self.rho) * gradient)
                    denominator = velocity - avg ** 2
                increment = gradient / (torch.sqrt(denominator) + self.epsilon)
                if self.momentum > 0:
                    m = self.momentums[i]
                    m.copy_(self.momentum * m + increment)
                    increment = m
                var.copy_(var - self.learning_rate * increment)
