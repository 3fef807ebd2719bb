# expect: passed
# source: independent answer: the class only wires closures over one state dict, built in __init__; NaN found with x != x and inf with abs() == inf
import math


def _make(init_scale, growth_factor, backoff_factor, growth_interval):
    st = {"scale": float(init_scale), "clean": 0, "found": None}

    def unscale(optimizer):
        bad = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(st["scale"])
                g = p.grad
                bad = bad or bool((g != g).any()) or bool((g.abs() == math.inf).any())
        st["found"] = bad
        return bad

    def step(optimizer):
        if st["found"] is None:
            unscale(optimizer)
        if st["found"] is False:
            optimizer.step()

    def update():
        if st["found"]:
            st["scale"] *= backoff_factor
            st["clean"] = 0
        else:
            st["clean"] += 1
            if st["clean"] >= growth_interval:
                st["scale"] *= growth_factor
                st["clean"] = 0
        st["found"] = None

    return st, unscale, step, update


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._st, self.unscale_, self.step, self.update = _make(init_scale, growth_factor, backoff_factor,
                                                                growth_interval)

    def scale(self, loss):
        return self._st["scale"] * loss

    def get_scale(self):
        return self._st["scale"]
