# expect: failed pitfall=decay-after-step+no-bias-correction
# source: look-alike of Hugging Face transformers.AdamW(correct_bias=False), the BERT fine-tuning recipe: no bias correction and decay after the update
import torch


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, correct_bias=False):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.correct_bias = correct_bias
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _coupled(self):
        return False

    @torch.no_grad()
    def step(self):
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            grad = p.grad + self.weight_decay * p if self._coupled() else p.grad
            state = self.state.setdefault(id(p), {"step": 0, "exp_avg": torch.zeros_like(p),
                                                  "exp_avg_sq": torch.zeros_like(p)})
            state["step"] += 1
            state["exp_avg"].mul_(beta1).add_(grad, alpha=1.0 - beta1)
            state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
            denom = state["exp_avg_sq"].sqrt().add_(self.eps)
            step_size = self.lr
            if self.correct_bias:
                step_size = step_size * (1.0 - beta2 ** state["step"]) ** 0.5 / (1.0 - beta1 ** state["step"])
            p.addcdiv_(state["exp_avg"], denom, value=-step_size)
            if self.weight_decay > 0.0 and not self._coupled():
                p.add_(p, alpha=-self.lr * self.weight_decay)


class Adam(AdamW):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _coupled(self):
        return True
