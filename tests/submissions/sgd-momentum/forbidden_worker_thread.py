# expect: forbidden
# Trick: the update is handed to a worker thread, which calls torch's functional sgd (dug out of
# the guard's closure, so no wrapper runs). The runner's own thread never calls anything forbidden.
import importlib
import threading

import torch

_functional = importlib.import_module("torch.optim." + "s" + "gd")
_real = next(c.cell_contents for c in getattr(_functional, "s" + "gd").__closure__
             if callable(c.cell_contents) and getattr(c.cell_contents, "__name__", "") == "s" + "gd")


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.options = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                            nesterov=nesterov, maximize=False)
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def _work(self):
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        bufs = [self.buffers[i] for i in live]
        _real([self.params[i] for i in live], [self.params[i].grad for i in live], bufs, **self.options)
        for i, b in zip(live, bufs):
            self.buffers[i] = b

    def step(self):
        worker = threading.Thread(target=self._work)
        worker.start()
        worker.join()
