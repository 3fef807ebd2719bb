# expect: passed
# Vectorised: each group flattened with torch.cat, norms with torch.linalg.vector_norm, the
# pre-clip norm from clip_grad_norm_'s return value, values returned as tensors.
import torch
import torch.nn.functional as F


def _flat(tensors):
    return torch.cat([t.detach().reshape(-1) for t in tensors])


def log_step(model, batch, optimizer, max_norm, per="group"):
    optimizer.zero_grad(set_to_none=True)
    x, y = batch
    out = model(x)
    loss = F.cross_entropy(out, y, reduction="mean")
    loss.backward()
    everything = [p for g in optimizer.param_groups for p in g["params"]]
    norm = torch.nn.utils.clip_grad_norm_(everything, max_norm=max_norm, norm_type=2.0)
    pieces = [[p] for p in everything] if per == "parameter" else [g["params"] for g in optimizer.param_groups]
    before = [_flat(piece).clone() for piece in pieces]
    optimizer.step()
    ratios = [torch.linalg.vector_norm(_flat(piece) - b) / torch.linalg.vector_norm(b)
              for piece, b in zip(pieces, before)]
    K = out.shape[-1]
    return {"loss": loss.detach(), "uniform_loss": torch.log(torch.tensor(float(K))),
            "grad_norm": norm, "update_ratios": ratios}
