# expect: failed pitfall=fairseq-adam
# source: look-alike of labml.ai's Adam (GenericAdaptiveOptimizer, WeightDecay() decoupled by default, optimized_update=True), defaults adapted to the stub
import math

import torch


class WeightDecay:
    def __init__(self, weight_decay=0.0, weight_decouple=True, absolute=False):
        self.weight_decay, self.weight_decouple, self.absolute = weight_decay, weight_decouple, absolute

    def __call__(self, param, grad, lr):
        if self.weight_decouple:
            param.data.mul_(1.0 - (self.weight_decay if self.absolute else lr * self.weight_decay))
            return grad
        return grad.add(param.data, alpha=self.weight_decay) if self.weight_decay else grad


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, optimized_update=True):
        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.weight_decay = WeightDecay(weight_decay)
        self.optimized_update = optimized_update
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def get_mv(self, state, grad):
        beta1, beta2 = self.betas
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.mul_(beta1).add_(grad, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        return m, v

    def adam_update(self, state, param, m, v):
        beta1, beta2 = self.betas
        bias_correction1 = 1 - beta1 ** state["step"]
        bias_correction2 = 1 - beta2 ** state["step"]
        if self.optimized_update:
            denominator = v.sqrt().add_(self.eps)
            step_size = self.lr * math.sqrt(bias_correction2) / bias_correction1
        else:
            denominator = (v.sqrt() / math.sqrt(bias_correction2)).add_(self.eps)
            step_size = self.lr / bias_correction1
        param.data.addcdiv_(m, denominator, value=-step_size)

    @torch.no_grad()
    def step(self):
        for param in self.params:
            if param.grad is None:
                continue
            state = self.state.setdefault(param, {})
            if not state:
                state["step"] = 0
                state["exp_avg"] = torch.zeros_like(param)
                state["exp_avg_sq"] = torch.zeros_like(param)
            grad = self.weight_decay(param, param.grad.data, self.lr)
            m, v = self.get_mv(state, grad)
            state["step"] += 1
            self.adam_update(state, param, m, v)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
