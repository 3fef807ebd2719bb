# expect: failed pitfall=rng-not-restored
# source: look-alike of the contents of a PyTorch Lightning checkpoint as its documentation lists them (written for this corpus): state_dict, optimizer_states, lr_schedulers, the precision plugin's scaler, epoch, global_step, the loops' batch progress and the ModelCheckpoint callback's best score; no global random-generator state
import copy


def save_state(run):
    ckpt = {
        "epoch": run.epoch,
        "global_step": run.update,
        "state_dict": run.model.state_dict(),
        "optimizer_states": [run.optimizer.state_dict()],
        "lr_schedulers": [run.scheduler.state_dict()],
        "MixedPrecision": run.scaler.state_dict(),
        "loops": {"fit_loop": {"epoch_loop.batch_progress": {"current": {"completed": run.batch}}}},
        "callbacks": {"ModelCheckpoint": {"best_model_score": run.best_loss, "best_weights": run.best_state}},
    }
    return copy.deepcopy(ckpt)


def load_state(run, ckpt):
    run.model.load_state_dict(ckpt["state_dict"])
    run.optimizer.load_state_dict(ckpt["optimizer_states"][0])
    run.scheduler.load_state_dict(ckpt["lr_schedulers"][0])
    run.scaler.load_state_dict(ckpt["MixedPrecision"])
    run.epoch = ckpt["epoch"]
    run.update = ckpt["global_step"]
    run.batch = ckpt["loops"]["fit_loop"]["epoch_loop.batch_progress"]["current"]["completed"]
    run.sampler.set_epoch(run.epoch)
    best = ckpt["callbacks"]["ModelCheckpoint"]
    run.best_loss = best["best_model_score"]
    run.best_state = copy.deepcopy(best["best_weights"])
