# expect: failed pitfall=lua-torch-dampening
# source: look-alike of Lua Torch's optim.sgd adapted to the signature: damp = config.dampening or mom (0 counts as unset), first velocity a copy of the gradient
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.config = {"learningRate": lr, "momentum": momentum, "dampening": dampening,
                       "weightDecay": weight_decay, "nesterov": nesterov}
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        lr = self.config["learningRate"]
        wd = self.config["weightDecay"]
        mom = self.config["momentum"]
        damp = self.config["dampening"] or mom
        nesterov = self.config["nesterov"]
        for x in self.params:
            if x.grad is None:
                continue
            dfdx = x.grad.clone()
            if wd != 0:
                dfdx.add_(x, alpha=wd)
            if mom != 0:
                st = self.state.setdefault(id(x), {})
                if "dfdx" not in st:
                    st["dfdx"] = dfdx.clone()
                else:
                    st["dfdx"].mul_(mom).add_(dfdx, alpha=1 - damp)
                if nesterov:
                    dfdx.add_(st["dfdx"], alpha=mom)
                else:
                    dfdx = st["dfdx"]
            x.add_(dfdx, alpha=-lr)
