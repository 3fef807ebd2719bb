# expect: failed pitfall=lr-finder-smoothed-curve
# source: look-alike of torch_lr_finder.LRFinder.range_test: the first loss kept, then smooth_f * loss + (1 - smooth_f) * history["loss"][-1] with smooth_f = 0.05, best_loss the smallest smoothed value, stop at diverge_th * best_loss (here the exercise's stop_factor)
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    smooth_f = 0.05
    history = {"lr": [], "loss": []}
    best_loss = None
    for iteration, (inputs, labels) in enumerate(batches):
        lr = start_lr * 10 ** (iteration / steps_per_decade)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
        loss = loss.item()
        history["lr"].append(lr)
        if iteration == 0:
            best_loss = loss
        else:
            loss = smooth_f * loss + (1 - smooth_f) * history["loss"][-1]
            if loss < best_loss:
                best_loss = loss
        history["loss"].append(loss)
        if loss > stop_factor * best_loss:
            return history["lr"], history["loss"], lr / 10
    return history["lr"], history["loss"], math.nan
