"""Known-wrong ways to build AdamW parameter groups.

Each pitfall is one correct grouping function with some options changed (its delta): how a
parameter is judged exempt from decay, what happens to frozen and tied parameters, and how the
groups are written out. Two deltas that change different options combine into one submission
making both mistakes, which grind uses to name a learner who makes two at once.
"""

from torch import nn

from grind_kit import Deltas

# The five classes the course's experiment lists, and the ones it leaves out.
FIVE = (nn.LayerNorm, nn.GroupNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
NORMS = FIVE + (nn.RMSNorm, nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)
WHITELIST = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)  # minGPT's idea: the layers whose weights decay

CORRECT = {
    "norms": "every class",  # which parameters count as normalization ones: "five", "layernorm", "ndim", "none"
    "bias": "by name",  # parameters registered as "bias" are exempt; "none": no such rule; "substring":
    # "bias" anywhere in the qualified name (relative_attention_bias.weight included)
    "frozen": "skip",  # "include": frozen parameters go into the groups too
    "ties": "once",  # "per module": a tensor is listed under every module that registers it
    "decay_key": True,  # False: the decay group has no "weight_decay" key
    "exempt_group": "explicit",  # "default": no "weight_decay" key; "omit": no exempt group at all
}


def _implementation(delta):
    o = {**CORRECT, **delta}

    whitelisted = set()

    def exempt(module, local_name, param, qualified):
        if o["bias"] == "by name" and local_name == "bias":
            return True
        if o["bias"] == "substring" and "bias" in qualified:
            return True
        rule = o["norms"]
        if rule == "whitelist":  # only the weights of linear and convolution layers decay (any owner)
            return id(param) not in whitelisted
        if rule == "every class":
            return isinstance(module, NORMS)
        if rule == "five":
            return isinstance(module, FIVE)
        if rule == "layernorm":
            return isinstance(module, nn.LayerNorm)
        if rule == "ndim":
            return param.ndim <= 1
        return False

    def param_groups(model, weight_decay):
        nonlocal whitelisted
        whitelisted = {id(m.weight) for m in model.modules() if isinstance(m, WHITELIST)}
        decay, no_decay, seen = [], [], set()
        for prefix, module in model.named_modules():
            for local_name, param in module.named_parameters(recurse=False):
                if o["ties"] == "once":
                    if id(param) in seen:
                        continue
                    seen.add(id(param))
                if not param.requires_grad and o["frozen"] == "skip":
                    continue
                qualified = f"{prefix}.{local_name}" if prefix else local_name
                (no_decay if exempt(module, local_name, param, qualified) else decay).append(param)
        groups = [{"params": decay, "weight_decay": weight_decay} if o["decay_key"] else {"params": decay}]
        if o["exempt_group"] == "explicit":
            groups.append({"params": no_decay, "weight_decay": 0.0})
        elif o["exempt_group"] == "default":
            groups.append({"params": no_decay})
        return groups

    return param_groups


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"  # every pair that changes different options; each costs a fraction of a second
combine = MISTAKES.combine

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "ndim-heuristic",
        "name": "exempt by shape: ndim <= 1 or a name ending in .bias",
        "library": "timm",
        "convention": True,
        "delta": {"norms": "ndim"},
        "explanation": "Parameters were exempted from decay because they are 1-D (or named .bias), not because a "
                       "normalization module owns them. That is the quick recipe, and timm's "
                       "param_groups_weight_decay: it works while every norm gain is a vector and every vector is "
                       "a norm gain. Neither holds in general. LayerNorm((3, 4)) has a 3x4 gain, which this rule "
                       "decays, and a learned per-channel scale on a custom module (LayerScale) is a 1-D weight, "
                       "which this rule wrongly exempts. The exercise decides by ownership: a parameter is exempt "
                       "when it is registered as 'bias' or its module is a normalization layer.",
        "hint": "Walk model.modules() and look at each module's own parameters (named_parameters(recurse=False)): "
                "decide by isinstance(module, <norm classes>) and the registered name, never by p.ndim.",
    },
    {
        "slug": "dim-below-2-exempt",
        "name": "exempt by shape alone: everything under 2-D",
        "library": "nanoGPT",
        "convention": True,
        "delta": {"norms": "ndim", "bias": "none"},
        "explanation": "Parameters were split by dimension alone: 2-D and larger decay, everything below 2-D does "
                       "not. That is nanoGPT's configure_optimizers, written for a GPT whose only vectors are "
                       "biases and LayerNorm gains. In general it decays the 2-D gain and the 2-D shift of "
                       "LayerNorm((3, 4)), and exempts a learned 1-D scale that is a real weight. The exercise "
                       "decides by ownership: registered as 'bias', or owned by a normalization module.",
        "hint": "Shape is a proxy. Ask which module registered the parameter and under what name.",
    },
    {
        "slug": "bias-name-only",
        "name": "only biases exempt: normalization parameters decay",
        "delta": {"norms": "none"},
        "explanation": "Only parameters named bias were exempt; the gains of LayerNorm, RMSNorm, GroupNorm, "
                       "BatchNorm and InstanceNorm were decayed toward zero like ordinary weights. A norm layer's "
                       "weight is a gain on a normalized activation (it starts at 1); shrinking it undoes what "
                       "the layer is for. Every parameter owned by a normalization module must be exempt, its "
                       "weight as well as its bias.",
        "hint": "Besides the name 'bias', check the owning module: isinstance(module, (nn.LayerNorm, nn.GroupNorm, "
                "...)) exempts all of its parameters.",
    },
    {
        "slug": "layernorm-only",
        "name": "LayerNorm is the only normalization layer recognised",
        "library": "transformers",
        "convention": True,
        "delta": {"norms": "layernorm"},
        "explanation": "Only nn.LayerNorm was treated as a normalization module, so the gains of GroupNorm, "
                       "BatchNorm1d/2d/3d, InstanceNorm and RMSNorm decayed. transformers' Trainer has long done "
                       "this (ALL_LAYERNORM_LAYERS is [nn.LayerNorm], plus names containing 'bias'; recent "
                       "releases add name patterns such as 'norm'), and a check for 'LayerNorm' in the class name "
                       "does the same. This exercise exempts every normalization layer it lists.",
        "hint": "List every normalization class: LayerNorm, GroupNorm, RMSNorm, BatchNorm1d/2d/3d and "
                "InstanceNorm1d/2d/3d.",
    },
    {
        "slug": "five-norm-classes",
        "name": "InstanceNorm and RMSNorm missing from the normalization classes",
        "delta": {"norms": "five"},
        "explanation": "The normalization classes were LayerNorm, GroupNorm and BatchNorm1d/2d/3d, the five of the "
                       "course's experiment, so the gains of nn.RMSNorm (the norm of Llama-style models) and of "
                       "InstanceNorm1d/2d/3d with affine=True decayed. They normalize activations like the others, "
                       "and this exercise exempts them too.",
        "hint": "Add nn.RMSNorm and nn.InstanceNorm1d/2d/3d to the tuple you test with isinstance.",
    },
    {
        "slug": "frozen-included",
        "name": "frozen parameters handed to the optimizer",
        "delta": {"frozen": "include"},
        "explanation": "Parameters with requires_grad=False went into the groups. AdamW skips a parameter without a "
                       "gradient, so the first steps look fine, but the optimizer holds tensors it must never "
                       "update: unfreeze a layer later, or let any code give them a .grad, and they start moving "
                       "(and decaying) with state nobody meant them to have. Frozen means left out.",
        "hint": "Skip every parameter whose requires_grad is False.",
    },
    {
        "slug": "tied-listed-twice",
        "name": "a tied weight listed twice",
        "delta": {"ties": "per module"},
        "explanation": "A tensor shared by two modules (an embedding tied to the output head) was listed once for "
                       "each module that registers it. torch.optim.AdamW refuses a tensor that appears in two "
                       "groups (ValueError: some parameters appear in more than one parameter group) and warns "
                       "about one listed twice in a group, where it would be updated twice per step. "
                       "model.parameters() and named_parameters() list each tensor once; when you walk modules "
                       "yourself, remember which tensors (by id) you have already placed.",
        "hint": "Keep a set of id(param) you have already placed and skip a parameter you meet again.",
    },
    {
        "slug": "decay-group-without-key",
        "name": "the decay group has no weight_decay key",
        "delta": {"decay_key": False},
        "explanation": "The group of decayed parameters did not say its weight_decay, so AdamW filled it in from "
                       "its constructor: the caller's weight_decay=... or, without one, torch's default 0.01, "
                       "instead of the value passed to param_groups. Every group should carry its own "
                       "weight_decay.",
        "hint": "Write {\"params\": decay, \"weight_decay\": weight_decay}.",
    },
    {
        "slug": "exempt-group-without-key",
        "name": "the no-decay group has no weight_decay key (it gets the optimizer's default)",
        "delta": {"exempt_group": "default"},
        "explanation": "The group meant to have no decay did not say weight_decay=0.0. A group without the key "
                       "takes the optimizer's default, so with torch.optim.AdamW(groups, lr=...) the biases and "
                       "norm gains decay at 0.01 (or at whatever weight_decay the AdamW call passes). "
                       "Leaving a key out means 'use the default', not 'none'.",
        "hint": "Write {\"params\": no_decay, \"weight_decay\": 0.0} explicitly.",
    },
    {
        "slug": "exempt-left-out",
        "name": "biases and norm parameters left out of the optimizer",
        "delta": {"exempt_group": "omit"},
        "explanation": "Only the decayed parameters were returned, so the biases and normalization parameters are "
                       "not in any group and AdamW never updates them: they stay at their initial values for the "
                       "whole run. 'No weight decay' means trained without decay, in a group of their own with "
                       "weight_decay=0.0.",
        "hint": "Return a second group, {\"params\": no_decay, \"weight_decay\": 0.0}.",
    },
    {
        "slug": "bias-substring",
        "name": "exempt when 'bias' appears anywhere in the name",
        "delta": {"bias": "substring"},
        "explanation": "A parameter was exempt when 'bias' occurred anywhere in its qualified name, not when its "
                       "module registered it as 'bias'. Names are chosen by model authors: T5-style models keep a "
                       "relative position bias as an nn.Embedding called relative_attention_bias, whose "
                       "'relative_attention_bias.weight' is an embedding table that must decay, and the substring "
                       "rule exempts it. Compare the registered name, the last part of the qualified name, with "
                       "'bias'.",
        "hint": "Use the name a module registered the parameter under (named_parameters(recurse=False) on each "
                "module, or name.rsplit('.', 1)[-1]) and compare it with 'bias' exactly.",
    },
    {
        "slug": "transformers-decay-names",
        "name": "transformers' rule: outside nn.LayerNorm and without 'bias' in the name",
        "library": "transformers (Trainer.get_decay_parameter_names)",
        "convention": True,
        "delta": {"norms": "layernorm", "bias": "substring"},
        "explanation": "Decay went to every parameter outside an nn.LayerNorm whose qualified name does not contain "
                       "'bias': the rule of the transformers Trainer (ALL_LAYERNORM_LAYERS, then 'bias' not in "
                       "name). It misses the other normalization layers (GroupNorm, BatchNorm, InstanceNorm, "
                       "RMSNorm: their gains decay), and its substring test exempts weights whose module name "
                       "contains 'bias', such as a T5-style relative_attention_bias embedding. The exercise exempts "
                       "every normalization class it lists and the parameters registered as 'bias'.",
        "hint": "Decide per module: isinstance(module, <every norm class>) or the registered name == 'bias'.",
    },
    {
        "slug": "bert-no-decay-substrings",
        "name": "BERT's no_decay list matched as substrings: norms missed",
        "library": "the BERT fine-tuning examples (no_decay = ['bias', 'LayerNorm.weight'])",
        "convention": True,
        "delta": {"norms": "none", "bias": "substring"},
        "explanation": "Parameters were exempt when their qualified name contained 'bias' or 'LayerNorm.weight', "
                       "the no_decay list of the BERT fine-tuning scripts. It works for BERT, whose norms are "
                       "attributes named LayerNorm. Elsewhere norms are called norm1, ln_f or final_norm, so their "
                       "gains decay, and any weight whose module name contains 'bias' (a relative_attention_bias "
                       "embedding) is exempted. Decide by the owning module's class and the registered name.",
        "hint": "isinstance(module, <norm classes>) instead of a name pattern, and the registered name == 'bias'.",
    },
    {
        "slug": "mingpt-whitelist",
        "name": "only Linear and Conv weights decay (minGPT's whitelist)",
        "library": "minGPT (configure_optimizers)",
        "convention": True,
        "delta": {"norms": "whitelist"},
        "explanation": "Only the weights of whitelisted layers (nn.Linear, and the convolutions) decayed; every "
                       "other parameter was exempt. That is minGPT's configure_optimizers: Linear weights decay, "
                       "LayerNorm and Embedding weights do not, biases do not. It exempts embedding tables and "
                       "learned scales on custom modules, which the exercise decays: every trainable parameter "
                       "decays unless it is registered as 'bias' or owned by a normalization layer.",
        "hint": "Start from 'everything decays', then exempt biases and normalization layers' parameters.",
    },
])
