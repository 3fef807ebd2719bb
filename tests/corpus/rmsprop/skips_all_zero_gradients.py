# expect: failed pitfall=zero-grad-skipped
# source: independent mistake: "nothing to do" for a parameter whose gradient is all zeros, the guard written as `if g is None or g.abs().max() == 0` to save work on frozen-looking tensors
import torch


class RMSprop(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                                  "momentum": momentum, "centered": centered})

    def step(self, closure=None):
        with torch.no_grad():
            for group in self.param_groups:
                lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
                for p in group["params"]:
                    g = p.grad
                    if g is None or g.abs().max() == 0:
                        continue
                    if group["weight_decay"] != 0:
                        g = g + group["weight_decay"] * p
                    state = self.state[p]
                    if len(state) == 0:
                        state["square_avg"] = torch.zeros_like(p)
                        state["grad_avg"] = torch.zeros_like(p)
                        state["momentum_buffer"] = torch.zeros_like(p)
                    sa = state["square_avg"]
                    sa.mul_(alpha).addcmul_(g, g, value=1 - alpha)
                    if group["centered"]:
                        ga = state["grad_avg"]
                        ga.mul_(alpha).add_(g, alpha=1 - alpha)
                        avg = (sa - ga * ga).sqrt_().add_(eps)
                    else:
                        avg = sa.sqrt().add_(eps)
                    if group["momentum"] > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(group["momentum"]).addcdiv_(g, avg)
                        p.add_(buf, alpha=-lr)
                    else:
                        p.addcdiv_(g, avg, value=-lr)
