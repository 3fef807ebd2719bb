# expect: passed
# source: independent answer: a small HessianOperator class (gradient kept with create_graph, products via backward-of-grad), tensors returned
import torch


class HessianOperator:
    def __init__(self, loss_fn, theta):
        self.p = theta.detach().clone().requires_grad_()
        self.g = torch.autograd.grad(loss_fn(self.p), self.p, create_graph=True)[0]

    def __matmul__(self, v):
        return torch.autograd.grad(self.g @ v, self.p, retain_graph=True)[0]


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    H = HessianOperator(loss_fn, theta)
    v = torch.randn(theta.numel(), dtype=theta.dtype, generator=torch.Generator().manual_seed(0))
    v = v / v.norm()
    lam = torch.tensor(float("nan"), dtype=torch.float64)
    for i in range(max_iter):
        w = H @ v
        lam_new = (v @ w).detach().double()
        v = (w / w.norm()).detach()
        if i > 0 and (lam_new - lam).abs() <= tol * lam_new.abs():
            return lam_new
        lam = lam_new
    return lam


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return torch.tensor(lr, dtype=torch.float64) / (1 - beta)
