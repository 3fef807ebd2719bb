# expect: failed pitfall=coupled-decay-in-adamw+no-bias-correction
# source: Adam from the update rule alone (no bias correction), AdamW as the same class with a weight decay default
class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.m = {}
        self.v = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad.detach() + self.weight_decay * p.detach()
            m = self.m[id(p)] = beta1 * self.m.get(id(p), 0) + (1 - beta1) * g
            v = self.v[id(p)] = beta2 * self.v.get(id(p), 0) + (1 - beta2) * g * g
            p.data.add_(-self.lr * m / (v.sqrt() + self.eps))


AdamW = type("AdamW", (Adam,), {
    "__init__": lambda self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2:
        Adam.__init__(self, params, lr, betas, eps, weight_decay)})
