# expect: failed pitfall=tutorial-checkpoint
# source: look-alike of PyTorch's "saving and loading a general checkpoint" recipe (written for this corpus): epoch, model_state_dict, optimizer_state_dict and loss through torch.save, training picks up at the start of the saved epoch
import io

import torch


def save_state(run):
    f = io.BytesIO()
    torch.save({
        "epoch": run.epoch,
        "model_state_dict": run.model.state_dict(),
        "optimizer_state_dict": run.optimizer.state_dict(),
        "loss": run.best_loss,
    }, f)
    return f.getvalue()


def load_state(run, blob):
    checkpoint = torch.load(io.BytesIO(blob), weights_only=True)
    run.model.load_state_dict(checkpoint["model_state_dict"])
    run.optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    run.epoch = checkpoint["epoch"]
    run.model.train()
