# expect: failed pitfall=decoupled-weight-decay+eps-inside-sqrt
# source: look-alike of Keras 3's keras.optimizers.RMSprop with weight_decay set: the base optimizer first shrinks the variable by lr * wd * variable (decoupled), then update_step: velocity starts at zero, epsilon added to the (centered) mean square before the root, lr folded into the momentum increment; written for this project with torch's argument names
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.variables = list(params)
        self.learning_rate, self.rho, self.epsilon = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        self.velocities, self.momentums, self.average_grads = {}, {}, {}

    def zero_grad(self):
        for v in self.variables:
            v.grad = None

    @torch.no_grad()
    def step(self):
        for i, variable in enumerate(self.variables):
            if variable.grad is None:
                continue
            if self.weight_decay:
                variable.sub_(variable * self.weight_decay * self.learning_rate)
            gradient = variable.grad
            velocity = self.velocities.setdefault(i, torch.zeros_like(variable))
            velocity.copy_(self.rho * velocity + (1 - self.rho) * torch.square(gradient))
            if self.centered:
                average_grad = self.average_grads.setdefault(i, torch.zeros_like(variable))
                average_grad.copy_(self.rho * average_grad + (1 - self.rho) * gradient)
                denominator = velocity - torch.square(average_grad) + self.epsilon
            else:
                denominator = velocity + self.epsilon
            increment = self.learning_rate * gradient / torch.sqrt(denominator)
            if self.momentum > 0:
                mom = self.momentums.setdefault(i, torch.zeros_like(variable))
                mom.copy_(self.momentum * mom + increment)
                variable.sub_(mom)
            else:
                variable.sub_(increment)
