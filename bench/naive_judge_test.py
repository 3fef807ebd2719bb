"""The baseline the batch figure is measured against: the naive judge, one pytest process per
submission, importing torch and the submission in-process. Used only by bench/bench.py."""

import importlib.util
import os

import torch


def _submission():
    spec = importlib.util.spec_from_file_location("submission", os.environ["SUBMISSION"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _params(grads):
    params = []
    for g in grads:
        p = torch.zeros_like(g, requires_grad=True)
        p.grad = g.clone()
        params.append(p)
    return params


def test_worked_example():
    mine = _params([torch.tensor([3.0, 4.0]), torch.tensor([12.0])])
    total = _submission().clip_grad_norm_(mine, 1.0)
    assert abs(float(total) - 13.0) < 1e-4
    assert torch.allclose(mine[0].grad, torch.tensor([3.0, 4.0]) / 13, atol=1e-5)


def test_random_against_torch():
    gen = torch.Generator().manual_seed(0)
    for size in (1, 5, 50, 500):
        grads = [torch.randn(size, generator=gen) for _ in range(3)]
        mine, theirs = _params(grads), _params(grads)
        total = _submission().clip_grad_norm_(mine, 1.0)
        expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
        assert torch.allclose(torch.as_tensor(total, dtype=expected.dtype), expected, rtol=1e-5)
        for a, b in zip(mine, theirs):
            assert torch.allclose(a.grad, b.grad, rtol=1e-5, atol=1e-7)
