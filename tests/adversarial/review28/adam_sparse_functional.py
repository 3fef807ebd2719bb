# hostile (guards and poison, marks): a fourth review of issue 28. torch's own maths through an optimizer the
# exercise did not name; expected verdict now: forbidden (the manifest names it). Before: PASSED for marks.
import math
import torch
from torch.optim import _functional as F   # torch's SparseAdam kernel: not on the forbidden list

class Adam:
    decoupled = False
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.eps, self.wd = lr, eps, weight_decay
        self.b1, self.b2 = betas
        self.state = {}
    def zero_grad(self):
        for p in self.params:
            p.grad = None
    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            n = p.numel()
            if i not in self.state:
                self.state[i] = [torch.zeros(n, dtype=p.dtype), torch.zeros(n, dtype=p.dtype), 0]
            st = self.state[i]
            st[2] += 1
            t = st[2]
            g = p.grad
            if self.wd:
                if self.decoupled:
                    p.mul_(1 - self.lr * self.wd)
                else:
                    g = g + self.wd * p
            flat = p.view(-1)
            sg = torch.sparse_coo_tensor(torch.arange(n).unsqueeze(0), g.reshape(-1).clone(), (n,))
            F.sparse_adam([flat], [sg], [st[0]], [st[1]], [t], eps=self.eps * math.sqrt(1 - self.b2 ** t),
                          beta1=self.b1, beta2=self.b2, lr=self.lr, maximize=False)

class AdamW(Adam):
    decoupled = True
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
