# expect: failed pitfall=timm-checkpoint
# source: look-alike of what timm's train script checkpoints and how it resumes (written for this corpus): 'state_dict', 'optimizer', the loss scaler under its own key, 'epoch' and 'metric'; saved mid-epoch here, so resuming at an epoch's first batch restarts the saved one; the scheduler left to be re-derived from the epoch, no generators, the best-metric tracker starting over
import copy


def save_state(run):
    return copy.deepcopy({
        "epoch": run.epoch,
        "state_dict": run.model.state_dict(),
        "optimizer": run.optimizer.state_dict(),
        "amp_scaler": run.scaler.state_dict(),
        "metric": run.best_loss,
    })


def load_state(run, checkpoint):
    run.model.load_state_dict(checkpoint["state_dict"])
    run.optimizer.load_state_dict(checkpoint["optimizer"])
    run.scaler.load_state_dict(checkpoint["amp_scaler"])
    run.epoch = checkpoint["epoch"]
    run.batch = 0
    run.sampler.set_epoch(run.epoch)
