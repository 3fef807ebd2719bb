# expect: failed pitfall=decay-after-momentum
# source: look-alike of Keras 3's SGD: the base optimizer's decoupled weight_decay (var -= var * wd * lr) applied before a momentum update in lr units
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.variables = list(params)
        self.learning_rate, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.momentums = {}

    def zero_grad(self):
        for v in self.variables:
            v.grad = None

    def _apply_weight_decay(self, variable):
        if self.weight_decay:
            variable.sub_(variable * self.weight_decay * self.learning_rate)

    def update_step(self, gradient, variable):
        lr = self.learning_rate
        if not self.momentum:
            variable.add_(-gradient * lr)
            return
        m = self.momentums.get(id(variable))
        m = -gradient * lr if m is None else m * self.momentum - gradient * lr * (1 - self.dampening)
        self.momentums[id(variable)] = m
        if self.nesterov:
            variable.add_(m * self.momentum - gradient * lr)
        else:
            variable.add_(m)

    @torch.no_grad()
    def step(self):
        for variable in self.variables:
            if variable.grad is None:
                continue
            self._apply_weight_decay(variable)
            self.update_step(variable.grad, variable)
