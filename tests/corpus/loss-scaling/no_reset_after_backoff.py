# expect: failed pitfall=no-reset-on-overflow
# source: independent mistake: all state in one dict; the overflow branch halves the scale but leaves the run of clean steps where it was
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.state = {"scale": float(init_scale), "good": 0, "inf": None,
                      "cfg": (growth_factor, backoff_factor, growth_interval)}

    def scale(self, loss):
        return self.state["scale"] * loss

    def unscale_(self, optimizer):
        grads = [p.grad for grp in optimizer.param_groups for p in grp["params"] if p.grad is not None]
        flags = []
        for g in grads:
            g.mul_(1.0 / self.state["scale"])
            flags.append(bool(torch.isfinite(g).all()))
        self.state["inf"] = not all(flags)
        return self.state["inf"]

    def step(self, optimizer):
        if self.state["inf"] is None:
            self.unscale_(optimizer)
        if self.state["inf"] is False:
            optimizer.step()

    def update(self):
        up, down, every = self.state["cfg"]
        if self.state["inf"]:
            self.state["scale"] *= down
        else:
            self.state["good"] += 1
            if self.state["good"] == every:
                self.state["scale"] *= up
                self.state["good"] = 0
        self.state["inf"] = None

    def get_scale(self):
        return self.state["scale"]
