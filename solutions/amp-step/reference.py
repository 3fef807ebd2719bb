"""Reference: one mixed-precision training loop with gradient accumulation and GradScaler."""

import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(microbatches):
        # Each microbatch carries 1/accum_steps of the group's mean loss, so the gradients that
        # backward() adds up in .grad are the gradient of the group's mean.
        loss = loss_fn(model(x), y) / accum_steps
        # The same scale S multiplies every microbatch of the group: update() has not run since
        # the group began, so .grad holds S * (true gradient), one S for the whole sum.
        scaler.scale(loss).backward()
        if (i + 1) % accum_steps != 0:
            continue  # not the group's last microbatch: keep accumulating, touch nothing else

        # Divide by S exactly once, after the last backward of the group. From here on .grad
        # holds true gradients (and inf/NaN stay inf/NaN: the scaler remembers it found them).
        scaler.unscale_(optimizer)
        # Clip the true gradients: max_norm means something only in true units. Before
        # unscale_ the norm would be S times too large and the clip far too strong.
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)

        scale_before = scaler.get_scale()
        scaler.step(optimizer)   # calls optimizer.step() only if no inf/NaN was found
        scaler.update()          # back off after an overflow, grow after a long clean run
        # GradScaler does not say whether it skipped, but update() does: a skipped step always
        # multiplies the scale by backoff_factor (< 1); a real one keeps it or grows it.
        if scaler.get_scale() >= scale_before:
            scheduler.step()     # the schedule counts updates that really happened
        optimizer.zero_grad()    # the next group starts from empty gradients
