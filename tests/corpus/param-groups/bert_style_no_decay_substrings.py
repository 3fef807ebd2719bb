# expect: failed pitfall=bert-no-decay-substrings
# source: the BERT fine-tuning examples' habit: no_decay = ["bias", "LayerNorm.weight"] matched as substrings of qualified names; norms not named like BERT's LayerNorm attribute are missed (written for this corpus)
NO_DECAY = ("bias", "LayerNorm.weight")


def param_groups(model, weight_decay):
    pairs = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    return [
        {"params": [p for n, p in pairs if not any(s in n for s in NO_DECAY)], "weight_decay": weight_decay},
        {"params": [p for n, p in pairs if any(s in n for s in NO_DECAY)], "weight_decay": 0.0},
    ]
