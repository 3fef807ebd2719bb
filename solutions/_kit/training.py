"""Training loops: a small seeded regression problem, the usual loop around a subject's
optimizer, and an optimizer that records what a subject's loop did with it."""

import torch

from grind_kit.optim import construct, flat, param_entries


def linear_problem(seed, d_in=4, d_out=3, n=16):
    """A float64 ``nn.Linear(d_in, d_out)`` with standard normal weights and ``n`` examples,
    all drawn from ``seed``: (model, x, y)."""
    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Linear(d_in, d_out).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64))
    x = torch.randn(n, d_in, generator=gen, dtype=torch.float64)
    y = torch.randn(n, d_out, generator=gen, dtype=torch.float64)
    return model, x, y


def training_inputs(seed, steps=30, optimizer=None, zero_in_place=None, **kwargs):
    """Inputs for :func:`training_loop` on :func:`linear_problem`; ``kwargs`` go to the optimizer."""
    def inputs():
        model, x, y = linear_problem(seed)
        built = {} if optimizer is None else {"optimizer": optimizer}
        built.update(model=model, x=x, y=y, steps=steps, kwargs=dict(kwargs))
        if zero_in_place is not None:
            built["zero_in_place"] = zero_in_place
        return built
    return inputs


def training_loop(subject, model, x, y, steps, kwargs, optimizer=None, zero_in_place=False):
    """The case's ``call``: zero_grad, forward (MSE), backward, step, ``steps`` times, with the
    subject's optimizer built on ``model.parameters()``, a generator, as in real code.

    With ``zero_in_place`` the loop zeroes each ``p.grad`` itself instead of calling
    ``zero_grad()``, so ``backward()`` accumulates into the very same gradient tensors step after
    step (what exposes state that aliases ``p.grad``); the optimizer then gets a list.
    Observes the parameters and the loss per step, and whether ``zero_grad()`` cleared them."""
    params = list(model.parameters())
    opt = construct(subject, list(params) if zero_in_place else model.parameters(), kwargs, optimizer)
    rows, losses, cleared = [], [], []
    for _ in range(steps):
        if zero_in_place:
            for p in params:
                if p.grad is not None:
                    p.grad.zero_()
        else:
            opt.zero_grad()
            cleared.append(all(p.grad is None or not bool(p.grad.any()) for p in params))
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        rows.append(flat(params))
    observations = {"params per step": torch.stack(rows), "loss per step": losses}
    if not zero_in_place:
        observations["grads cleared by zero_grad per step"] = cleared
    return observations


training_loop.entries = param_entries("params per step")


class RecordingSGD:
    """Plain SGD (``p -= lr * p.grad``) that records what a subject's training code did with it:
    ``calls`` counts ``step()``, and ``grads`` keeps, per step, every parameter's gradient
    flattened into one row (zeros for a parameter without one).

    It offers what training code uses from ``torch.optim.SGD``: ``param_groups`` (built from a
    list of tensors or of group dicts, as torch accepts), ``state``, ``step()`` and
    ``zero_grad(set_to_none=True)``. It is not a ``torch.optim.Optimizer`` subclass: creating
    one imports ``torch._dynamo``, over a second per process, on the learner's clock."""

    def __init__(self, params, lr, record=True):
        params = list(params)
        groups = params if params and isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = [{"params": list(g["params"]), "lr": g.get("lr", lr)} for g in groups]
        self.state = {}
        self.calls = 0
        self.grads = []
        self.record = record  # False: count steps only (a long run that never reads grads_per_step)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def step(self, closure=None):
        # No torch.no_grad() decorator: the update goes through a detached view of each parameter
        # (the same storage, version counter bumped, as under no_grad), which costs no Python
        # calls per step; a long loss-scaling run steps 2,000 times under the guard's profile hook.
        self.calls += 1
        if self.record:
            params = [p for group in self.param_groups for p in group["params"]]
            grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
            self.grads.append(torch.cat([g.detach().flatten() for g in grads]))
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.detach().add_(p.grad.detach(), alpha=-group["lr"])

    def grads_per_step(self):
        """The recorded gradients as one [steps, entries] tensor (no rows if it never stepped)."""
        if self.grads:
            return torch.stack(self.grads)
        count = sum(p.numel() for group in self.param_groups for p in group["params"])
        dtype = next((p.dtype for group in self.param_groups for p in group["params"]), torch.float64)
        return torch.zeros(0, count, dtype=dtype)
