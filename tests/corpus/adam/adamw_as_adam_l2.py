# expect: failed pitfall=coupled-decay-in-adamw
# source: "AdamW is Adam with weight decay": the subclass only changes the default, so the decay still goes through the gradient
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = [dict(step=0, m=torch.zeros_like(p), v=torch.zeros_like(p)) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        beta1, beta2 = self.betas
        for p, s in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad.add(p, alpha=self.weight_decay)
            s["step"] += 1
            s["m"].lerp_(g, 1 - beta1)
            s["v"].lerp_(g * g, 1 - beta2)
            m_hat = s["m"] / (1 - beta1 ** s["step"])
            v_hat = s["v"] / (1 - beta2 ** s["step"])
            p.addcdiv_(m_hat, v_hat.sqrt().add(self.eps), value=-self.lr)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
