# expect: failed pitfall=counts-sequences
# source: look-alike of fairseq with --sentence-avg: token losses summed, sample_size = number of sentences (target.size(0)), grads divided by the group's sample_size
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        optimizer.zero_grad()
        sample_size = 0
        for sample in microbatches[start:start + k]:
            net_output = model(sample[0])
            loss = loss_fn(net_output, sample[1])
            if len(sample) == 3:
                loss = loss[sample[2]]
            loss.sum().backward()
            sample_size += sample[1].size(0)
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(1.0 / sample_size)
        optimizer.step()
