# expect: passed
# source: one backward per example (or per valid token row), each divided by the group's count: slow, obviously right
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    n_groups = (len(microbatches) + k - 1) // k
    for g in range(n_groups):
        group = microbatches[g * k:(g + 1) * k]
        denominator = 0
        for mb in group:
            denominator += mb[2].sum().item() if len(mb) == 3 else mb[0].shape[0]
        optimizer.zero_grad()
        for mb in group:
            for j in range(mb[0].shape[0]):
                out = loss_fn(model(mb[0][j:j + 1]), mb[1][j:j + 1])
                if len(mb) == 3:
                    out = out[mb[2][j:j + 1]]
                if out.numel():
                    (out.sum() / denominator).backward()
        optimizer.step()
