# expect: failed pitfall=weights-only
# source: the save_weights habit (Keras' ModelCheckpoint(save_weights_only=True), a state_dict saved for inference): the weights, cloned, and nothing of the training process (written for this corpus)
def save_state(run):
    return {name: tensor.detach().clone() for name, tensor in run.model.state_dict().items()}


def load_state(run, weights):
    run.model.load_state_dict(weights)
