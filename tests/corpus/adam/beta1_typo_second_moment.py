# expect: failed pitfall=beta1-for-second-moment
# source: a copy-pasted moment line whose beta was never changed: v = b1 * v + (1 - b1) * g**2
def _moments(m, v, g, b1, b2):
    m = b1 * m + (1 - b1) * g
    v = b1 * v + (1 - b1) * g.pow(2)
    return m, v


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.t = [0] * len(self.params)
        self.m = [0.0] * len(self.params)
        self.v = [0.0] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _grad(self, p):
        return p.grad + self.weight_decay * p.data

    def step(self):
        b1, b2 = self.betas
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = self._grad(p)
            self.t[i] += 1
            self.m[i], self.v[i] = _moments(self.m[i], self.v[i], g, b1, b2)
            m_hat = self.m[i] / (1 - b1 ** self.t[i])
            v_hat = self.v[i] / (1 - b2 ** self.t[i])
            p.data -= self.lr * m_hat / (v_hat.sqrt() + self.eps)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _grad(self, p):
        p.data *= 1 - self.lr * self.weight_decay
        return p.grad
