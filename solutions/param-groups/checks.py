"""Cases for param-groups.

The learner's ``param_groups(model, weight_decay)`` returns groups for ``torch.optim.AdamW``.
How many groups there are, and in which order, is the learner's choice, so nothing observed
here depends on it. For each parameter of the model, in ``model.named_parameters()`` order
(which lists a tied tensor once, under its first name), a case records:

- ``weight decay``: what AdamW will apply to it: its group's ``weight_decay``, or the
  optimizer's own default when the group has none (torch fills missing keys from the
  constructor's arguments); ``-1`` when no group lists it;
- ``times listed``: how many times the tensor appears across all the groups;

and for the groups as a whole:

- ``AdamW accepts the groups``: ``torch.optim.AdamW(groups, lr=LR, weight_decay=DEFAULT)`` took
  them. torch refuses a tensor that is in two groups (ValueError) and warns about one listed
  twice inside a group ("in future, this will cause an error"); both count as refused here, so
  a tied weight listed twice gets one verdict however the groups are laid out;
- ``tensors that are not model parameters``: entries of the groups that are not parameters of
  the model (a buffer, a copy);
- ``parameters after two AdamW updates``: every parameter, flattened, after two real AdamW
  updates on fixed gradients, unchanged when AdamW refused the groups. This is what a missing
  ``weight_decay`` key, an extra key such as ``lr``, or a parameter left out does to training.

The models are never run forward, so they need not be networks anyone would train, but they
are built like real ones. Each case's inputs carry a ``note`` that says what the model has
that ``repr(model)`` does not show (frozen parameters, tied weights).
"""

import random
import warnings

import torch
from torch import nn

from grind_kit import case

LR = 0.05
DEFAULT = 0.25  # the AdamW constructor's weight_decay: what a group without the key falls back to
UPDATES = 2
ABSENT = -1.0  # "weight decay" of a parameter that no group lists

# The first torch.optim.AdamW in a process imports torch._dynamo (about a second). Building one
# here, while the checks load, keeps that out of the learner's time limit.
torch.optim.AdamW([torch.zeros(1, requires_grad=True)], lr=LR)


# ---------------------------------------------------------------------------------------------
# The call: the learner's groups, read the way AdamW reads them, then AdamW itself.

def _read_groups(returned):
    """The groups as AdamW will see them, each with its tensors in a list."""
    groups = list(returned)
    if groups and not isinstance(groups[0], dict):
        groups = [{"params": groups}]  # torch reads a bare list of tensors as one group
    read = []
    for group in groups:
        if not isinstance(group, dict):
            raise TypeError(f"each parameter group must be a dict with a 'params' key, got "
                            f"{type(group).__name__}")
        params = group["params"]
        if isinstance(params, torch.Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the "
                            "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)  # a generator is read once, here, and AdamW gets the list
        read.append({**group, "params": params})
    return read


def _adamw(groups):
    """AdamW on the groups, or None when torch refuses them (a tensor listed twice)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            optimizer = torch.optim.AdamW(groups, lr=LR, weight_decay=DEFAULT)
        except ValueError as exc:
            if "more than one parameter group" in str(exc):
                return None
            raise
    if any("duplicate parameters" in str(w.message) for w in caught):
        return None
    return optimizer


def run(subject, model, weight_decay, note=""):
    named = list(model.named_parameters())
    position = {id(p): i for i, (_, p) in enumerate(named)}
    trainable = [p.requires_grad for _, p in named]  # read before the subject runs

    groups = _read_groups(subject.param_groups(model, weight_decay))

    decay = torch.full((len(named),), ABSENT, dtype=torch.float64)
    listed = torch.zeros(len(named), dtype=torch.int64)
    foreign = 0
    for group in groups:
        group_decay = group.get("weight_decay", DEFAULT)
        for tensor in group["params"]:
            i = position.get(id(tensor))
            if i is None:
                foreign += 1
                continue
            if listed[i] == 0:
                decay[i] = float(group_decay)
            listed[i] += 1

    optimizer = _adamw(groups)
    if optimizer is not None:
        gen = torch.Generator().manual_seed(7)
        for _ in range(UPDATES):
            for (_, p), train in zip(named, trainable):
                if train:
                    p.grad = torch.randn(p.shape, generator=gen, dtype=p.dtype)
            optimizer.step()
    after = (torch.cat([p.detach().reshape(-1).clone() for _, p in named]) if named
             else torch.zeros(0))
    return {
        "weight decay": decay,
        "times listed": listed,
        "AdamW accepts the groups": optimizer is not None,
        "tensors that are not model parameters": foreign,
        "parameters after two AdamW updates": after,
    }


def _entries(inputs):
    """Verdicts name parameters, "first differs at 1.ln.weight", not offsets."""
    named = list(inputs["model"].named_parameters())
    each = [(name, []) for name, _ in named]
    return {"weight decay": each, "times listed": each,
            "parameters after two AdamW updates": [(name, list(p.shape)) for name, p in named]}


run.entries = _entries


# ---------------------------------------------------------------------------------------------
# Small modules of the kind real models define themselves.

class LayerScale(nn.Module):
    """A learned per-channel scale (as in CaiT and DINOv2): a 1-D weight, not a normalization."""

    def __init__(self, dim, init=0.1):
        super().__init__()
        self.scale = nn.Parameter(torch.full((dim,), init))

    def forward(self, x):
        return x * self.scale


class ChannelAffine(nn.Module):
    """A per-channel scale and shift registered directly on a custom module (no normalization)."""

    def __init__(self, dim):
        super().__init__()
        self.gain = nn.Parameter(torch.linspace(0.5, 1.5, dim))
        self.bias = nn.Parameter(torch.linspace(-0.1, 0.1, dim))

    def forward(self, x):
        return x * self.gain + self.bias


class Attention(nn.Module):
    def __init__(self, dim, bias=True):
        super().__init__()
        self.query = nn.Linear(dim, dim, bias=bias)
        self.key = nn.Linear(dim, dim, bias=bias)
        self.value = nn.Linear(dim, dim, bias=bias)
        self.out = nn.Linear(dim, dim, bias=bias)


class Block(nn.Module):
    """A pre-norm transformer block."""

    def __init__(self, dim, norm=nn.LayerNorm, bias=True, layer_scale=False):
        super().__init__()
        self.norm1 = norm(dim)
        self.attn = Attention(dim, bias=bias)
        self.norm2 = norm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim, bias=bias), nn.GELU(), nn.Linear(2 * dim, dim, bias=bias))
        self.layer_scale = LayerScale(dim) if layer_scale else nn.Identity()


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, blocks, tie=False, final_norm=nn.LayerNorm, **block_options):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(6, dim) * 0.02)  # a learned 2-D table: a weight
        self.blocks = nn.ModuleList(Block(dim, **block_options) for _ in range(blocks))
        self.final_norm = final_norm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        if tie:
            self.head.weight = self.tokens.weight  # one tensor, reachable as tokens.weight and head.weight


def _frozen(module):
    module.requires_grad_(False)
    return module


# ---------------------------------------------------------------------------------------------
# Inputs.

def model_case(build, weight_decay=0.1, seed=0, note=""):
    def inputs():
        torch.manual_seed(seed)
        return {"model": build(), "weight_decay": weight_decay, "note": note}
    return inputs


def worked_example():
    torch.manual_seed(54)  # the course's experiment seeds its model this way
    return nn.Sequential(nn.Linear(2, 24), nn.Tanh(), nn.Linear(24, 2))


def layernorm_2d_shape():
    return nn.Sequential(nn.Linear(6, 12), nn.Unflatten(1, (3, 4)), nn.LayerNorm((3, 4)), nn.Flatten(),
                         nn.Linear(12, 2))


def learned_scale_1d():
    return nn.Sequential(nn.Linear(4, 8), LayerScale(8), nn.GELU(), ChannelAffine(8), nn.Linear(8, 2))


def group_norm():
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(4, 8), nn.ReLU(), nn.Conv2d(8, 4, 1))


def batchnorm_1d():
    return nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3))


def batchnorm_2d():
    return nn.Sequential(nn.Conv2d(3, 6, 3, bias=False), nn.BatchNorm2d(6), nn.ReLU(), nn.Conv2d(6, 2, 1))


def batchnorm_3d():
    return nn.Sequential(nn.Conv3d(2, 4, 3), nn.BatchNorm3d(4), nn.ReLU(), nn.Conv3d(4, 2, 1))


def instance_norm():
    return nn.Sequential(nn.Conv1d(3, 4, 3), nn.InstanceNorm1d(4, affine=True), nn.ReLU(),
                         nn.Conv2d(4, 4, 1), nn.InstanceNorm2d(4, affine=True))


def rms_norm():
    return nn.Sequential(nn.Embedding(10, 8), nn.RMSNorm(8), nn.Linear(8, 10))


def embedding():
    return nn.Sequential(nn.Embedding(12, 6, padding_idx=0), nn.Linear(6, 3))


def frozen_layer():
    # a "pretrained" embedding and first layer kept fixed, a new head trained on top
    return nn.Sequential(_frozen(nn.Embedding(9, 6)), _frozen(nn.Linear(6, 6)), nn.LayerNorm(6), nn.Linear(6, 2))


def frozen_norm_and_bias():
    model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.Linear(6, 2))
    model[1].weight.requires_grad_(False)
    model[2].bias.requires_grad_(False)
    return model


def tied_embedding_and_head():
    return TinyLM(vocab=11, dim=4, blocks=1, tie=True)


def bias_false_layers():
    return nn.Sequential(nn.Linear(4, 8, bias=False), nn.LayerNorm(8, bias=False), nn.Conv1d(8, 8, 1, bias=False),
                         nn.BatchNorm1d(8), nn.Linear(8, 2, bias=False))


def only_weights():
    return nn.Sequential(nn.Linear(3, 5, bias=False), nn.Tanh(), nn.Linear(5, 2, bias=False))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        shared = nn.Linear(4, 4)
        self.stages = nn.ModuleDict({
            "stem": nn.Sequential(nn.Conv1d(2, 4, 3), nn.GroupNorm(2, 4)),
            "body": nn.ModuleList([
                nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4)), LayerScale(4)),
                nn.Sequential(shared, nn.BatchNorm1d(4), ChannelAffine(4)),
            ]),
        })
        self.again = shared  # one module registered twice: its parameters are still one set
        self.head = nn.Sequential(nn.Sequential(nn.RMSNorm(4), nn.Linear(4, 3)))


def nothing_to_decay():
    model = nn.Sequential(nn.LayerNorm(6), nn.Linear(6, 6), nn.GroupNorm(2, 6), nn.BatchNorm1d(6))
    model[1].weight.requires_grad_(False)  # its bias still trains
    return model


class RelativeBias(nn.Module):
    """T5-style attention with a learned relative position bias: an nn.Embedding whose qualified
    name ends in 'relative_attention_bias.weight'. It is an embedding table (it decays), though
    'bias' is in its name."""

    def __init__(self, dim, heads=2, buckets=8):
        super().__init__()
        self.q = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.relative_attention_bias = nn.Embedding(buckets, heads)
        self.layer_norm = nn.RMSNorm(dim)


def relative_attention_bias():
    return nn.Sequential(nn.Embedding(10, 4), RelativeBias(4), nn.Linear(4, 10))


def transformer_stack():
    return TinyLM(vocab=13, dim=4, blocks=2, norm=nn.RMSNorm, final_norm=nn.RMSNorm, layer_scale=True)


CASES = [
    case("worked_example", "example", inputs=model_case(worked_example, 0.01), call=run,
         shown=["weight decay", "times listed", "tensors that are not model parameters"]),
    case("layernorm_over_2d_shape", inputs=model_case(layernorm_2d_shape), call=run),
    case("learned_1d_scale", inputs=model_case(learned_scale_1d), call=run),
    case("group_norm", inputs=model_case(group_norm), call=run),
    case("batchnorm_1d", inputs=model_case(batchnorm_1d), call=run),
    case("batchnorm_2d", inputs=model_case(batchnorm_2d, 0.05), call=run),
    case("batchnorm_3d", inputs=model_case(batchnorm_3d), call=run),
    case("instance_norm", inputs=model_case(instance_norm), call=run),
    case("rms_norm", inputs=model_case(rms_norm), call=run),
    case("embedding", inputs=model_case(embedding, 0.02), call=run),
    case("frozen_layer", inputs=model_case(frozen_layer, note="frozen: 0.weight, 1.weight, 1.bias"), call=run),
    case("frozen_norm_weight_and_bias",
         inputs=model_case(frozen_norm_and_bias, note="frozen: 1.weight, 2.bias"), call=run),
    case("tied_embedding_and_head",
         inputs=model_case(tied_embedding_and_head, note="head.weight is tokens.weight (one tensor)"), call=run),
    case("bias_false_layers", inputs=model_case(bias_false_layers), call=run),
    case("only_weights", inputs=model_case(only_weights), call=run),
    case("nested_modules",
         inputs=model_case(Nested, note="stages.body.1.0 and again are one Linear, registered twice"), call=run),
    case("nothing_to_decay", inputs=model_case(nothing_to_decay, note="frozen: 1.weight"), call=run),
    case("transformer_stack", inputs=model_case(transformer_stack), call=run),
    case("relative_attention_bias", inputs=model_case(relative_attention_bias), call=run),
]


# ---------------------------------------------------------------------------------------------
# Random stacks: an MLP or a transformer-ish model of `size` blocks, drawn from the seed.

def _random_block(dim, rng):
    kind = rng.choice(["mlp", "attention", "norm", "scale", "conv"])
    if kind == "mlp":
        return nn.Sequential(nn.Linear(dim, 2 * dim, bias=rng.random() < 0.7), nn.GELU(),
                             nn.Linear(2 * dim, dim, bias=rng.random() < 0.7))
    if kind == "attention":
        norm = rng.choice([nn.LayerNorm, nn.RMSNorm])
        return Block(dim, norm=norm, bias=rng.random() < 0.5, layer_scale=rng.random() < 0.5)
    if kind == "norm":
        return rng.choice([lambda: nn.LayerNorm(dim), lambda: nn.RMSNorm(dim), lambda: nn.BatchNorm1d(dim),
                           lambda: nn.GroupNorm(2, dim), lambda: nn.LayerNorm((2, dim // 2)),
                           lambda: nn.InstanceNorm1d(dim, affine=True)])()
    if kind == "scale":
        return rng.choice([LayerScale, ChannelAffine])(dim)
    return nn.Sequential(nn.Conv1d(dim, dim, 3, padding=1, bias=rng.random() < 0.5),
                         rng.choice([nn.BatchNorm1d, lambda d: nn.GroupNorm(2, d)])(dim))


def random_inputs(size, seed):
    rng = random.Random(1000 * size + seed)
    torch.manual_seed(1000 * size + seed)
    dim = rng.choice([4, 6, 8])
    vocab = rng.randint(5, 12)
    model = nn.Module()
    if rng.random() < 0.5:
        model.embed = nn.Embedding(vocab, dim)
    else:
        model.embed = nn.Linear(3, dim)
    model.blocks = nn.Sequential(*[_random_block(dim, rng) for _ in range(size)])
    model.head = nn.Linear(dim, vocab, bias=rng.random() < 0.5)
    notes = []
    if isinstance(model.embed, nn.Embedding) and rng.random() < 0.5:
        model.head.weight = model.embed.weight
        notes.append("head.weight is embed.weight (one tensor)")
    frozen = [name for name, p in model.named_parameters() if rng.random() < 0.1]
    params = dict(model.named_parameters())
    for name in frozen:
        params[name].requires_grad_(False)
    if frozen:
        notes.append("frozen: " + ", ".join(frozen))
    return {"model": model, "weight_decay": rng.choice([0.01, 0.05, 0.1, 0.3]), "note": "; ".join(notes)}


CASES.append(case("random", "random", inputs=random_inputs, call=run, sizes=[1, 2, 4, 8, 16], seeds=2))
