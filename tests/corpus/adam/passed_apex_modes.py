# expect: passed
# source: look-alike of NVIDIA apex FusedAdam's kernel over flattened tensors: adam_w_mode=False (L2) for Adam, adam_w_mode=True for AdamW
import torch

ADAM_MODE_L2, ADAM_MODE_W = 0, 1


def fused_step(p, g, m, v, *, lr, beta1, beta2, eps, step, mode, decay):
    """What the CUDA kernel does per element, on flat views."""
    if mode == ADAM_MODE_L2:
        g = g + decay * p
    m.mul_(beta1).add_((1 - beta1) * g)
    v.mul_(beta2).add_((1 - beta2) * g * g)
    m_corr = m / (1 - beta1 ** step)
    v_corr = v / (1 - beta2 ** step)
    update = m_corr / (v_corr.sqrt() + eps)
    if mode == ADAM_MODE_W:
        update = update + decay * p
    p.sub_(lr * update)


class _Fused:
    mode = ADAM_MODE_L2

    def __init__(self, params, lr, betas, eps, weight_decay):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.bufs = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            if p not in self.bufs:
                self.bufs[p] = [0, torch.zeros(p.numel(), dtype=p.dtype), torch.zeros(p.numel(), dtype=p.dtype)]
            buf = self.bufs[p]
            buf[0] += 1
            flat = p.view(-1)
            fused_step(flat, p.grad.reshape(-1), buf[1], buf[2], lr=self.lr, beta1=self.betas[0],
                       beta2=self.betas[1], eps=self.eps, step=buf[0], mode=self.mode, decay=self.weight_decay)


class Adam(_Fused):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay)


class AdamW(_Fused):
    mode = ADAM_MODE_W

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
