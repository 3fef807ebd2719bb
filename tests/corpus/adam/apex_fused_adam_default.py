# expect: failed pitfall=decoupled-decay-in-adam
# source: look-alike of NVIDIA apex FusedAdam with its default adam_w_mode=True used as "Adam" (DeepSpeed's FusedAdam has the same default)
import torch


class FusedAdam:
    def __init__(self, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-8,
                 adam_w_mode=True, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.bias_correction, self.betas, self.eps = lr, bias_correction, betas, eps
        self.adam_w_mode, self.weight_decay = adam_w_mode, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            st = self.state.setdefault(id(p), {"step": 0})
            if "exp_avg" not in st:
                st["exp_avg"] = torch.zeros_like(p)
                st["exp_avg_sq"] = torch.zeros_like(p)
            st["step"] += 1
            g = p.grad
            if not self.adam_w_mode:
                g = g + self.weight_decay * p
            st["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
            st["exp_avg_sq"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
            bc1 = 1 - beta1 ** st["step"] if self.bias_correction else 1.0
            bc2 = 1 - beta2 ** st["step"] if self.bias_correction else 1.0
            update = (st["exp_avg"] / bc1) / ((st["exp_avg_sq"] / bc2).sqrt() + self.eps)
            if self.adam_w_mode:
                update = update + self.weight_decay * p
            p.sub_(self.lr * update)


class Adam(FusedAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


class AdamW(FusedAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
