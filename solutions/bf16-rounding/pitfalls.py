"""Known-wrong float32 -> bfloat16 / float16 conversions.

One converter, written once for any target with ``exponent_bits`` and ``fraction_bits``, is cut
into the choices the mistakes change (how the dropped bits round, whether NaNs are caught
before the carry, whether the target's subnormals exist, which exponent bias the target gets).
Each pitfall is a set of options of it (``Deltas.on_options``), applied to both entry points.
"""

import torch

from grind_kit import Deltas

_FORMATS = {"to_bfloat16_bits": (8, 7), "to_float16_bits": (5, 10)}


def _convert(x, exponent_bits, fraction_bits, rounding="even", nan_check=True, subnormals=True, bias=None):
    u = x.detach().to(torch.float32).contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    sign = (u >> 31) << (exponent_bits + fraction_bits)
    e = (u >> 23) & 0xFF
    f = u & 0x7FFFFF
    target_bias = (1 << (exponent_bits - 1)) - 1 if bias is None else bias
    drop = 23 - fraction_bits
    # the value is s * 2**(max(e, 1) - 150), s with its implicit bit when e >= 1
    s = f | torch.where(e >= 1, torch.full_like(f, 1 << 23), torch.zeros_like(f))
    t = e.clamp(min=1) - (127 - target_bias)  # the target's biased exponent, if it were normal
    shift = (drop + (1 - t).clamp(min=0)).clamp(max=40)
    kept = s >> shift
    rest = s & ((torch.ones_like(s) << shift) - 1)
    half = torch.ones_like(s) << (shift - 1)
    if rounding == "even":
        up = (rest > half) | ((rest == half) & ((kept & 1) == 1))
    elif rounding == "away":
        up = rest >= half
    else:  # "truncate"
        up = torch.zeros_like(rest, dtype=torch.bool)
    enc = ((t.clamp(min=1) - 1) << fraction_bits) + kept + up.to(torch.int64)
    inf = ((1 << exponent_bits) - 1) << fraction_bits
    if not subnormals:
        enc = torch.where(t <= 0, torch.zeros_like(enc), enc)
    enc = enc.clamp(max=inf)
    if nan_check:
        is_nan = (e == 0xFF) & (f != 0)
        enc = torch.where(is_nan, inf | (1 << (fraction_bits - 1)), enc)
    elif drop == 16:
        # bfloat16 without a NaN test: the one-line carry on the raw bits, exponent 255 included
        return ((u + {"even": 0x7FFF + ((u >> 16) & 1), "away": 0x8000, "truncate": 0}[rounding]) >> 16) & 0xFFFF
    else:
        # float16 without a NaN test: exponent 255 re-biased is far past 30, so it overflows to infinity
        enc = torch.where(e == 0xFF, torch.full_like(enc, inf), enc)
    return sign | enc


def _implementation(options):
    # A wrong bias is a float16 mistake (bfloat16 keeps float32's 127): only float16's entry gets it,
    # so the mistake, alone or paired, leaves bfloat16's answers right as the learner's do.
    def options_for(fmt):
        return {k: v for k, v in options.items() if k != "bias" or fmt == _FORMATS["to_float16_bits"]}

    return {name: (lambda x, _fmt=fmt: _convert(x, *_fmt, **options_for(_fmt))) for name, fmt in _FORMATS.items()}


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"
combine = MISTAKES.combine

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "truncation",
        "name": "dropped bits cut off instead of rounded (TensorFlow's FloatToBFloat16)",
        "library": "TensorFlow",
        "convention": True,
        "delta": {"rounding": "truncate"},
        "explanation": "The low bits were simply discarded, which rounds every value toward zero: 1 + 3 * 2**-8 "
                       "became 0x3F81 instead of 0x3F82, and 65519 stayed finite where it must round to 65504 "
                       "and 65520 to infinity. This is what TensorFlow's FloatToBFloat16 "
                       "(tensorflow/core/framework/bfloat16.cc) did: it copies the high 16 bits of each float. "
                       "torch's casts round to the nearest pattern, and a tie to the one with an even last bit.",
        "hint": "Look at the dropped bits: above half a unit round up, below it round down, exactly half goes to "
                "the even neighbour.",
    },
    {
        "slug": "ties-away",
        "name": "ties rounded away from zero",
        "delta": {"rounding": "away"},
        "explanation": "Adding half a unit and cutting (u + 0x8000 for bfloat16) rounds to nearest, but a tie "
                       "always goes up in magnitude: 1 + 2**-8 became 0x3F81 instead of 0x3F80, 2049 became 2050 "
                       "in float16 instead of 2048. IEEE's default, and torch's cast, sends a tie to the "
                       "neighbour whose last kept bit is 0, so the rounding errors do not all lean one way.",
        "hint": "Add 0x7FFF plus the lowest kept bit (bfloat16), or round up on an exact half only when the kept "
                "part is odd.",
    },
    {
        "slug": "nan-to-inf",
        "name": "NaN carried into infinity by the rounding",
        "delta": {"nan_check": False},
        "explanation": "A NaN has the all-ones exponent and a non-zero fraction. When every set fraction bit is "
                       "among the dropped ones (0x7F800001), the kept fraction is 0, which is the infinity "
                       "pattern; and rounding's carry can even overflow into the sign bit (0x7FFFFFFF became "
                       "0x8000, minus zero). A NaN must stay a NaN: test for it on the original bits first.",
        "hint": "Before rounding, check (bits & 0x7FFFFFFF) > 0x7F800000 and return a NaN pattern for those.",
    },
    {
        "slug": "no-subnormals",
        "name": "subnormal results flushed to zero",
        "delta": {"subnormals": False},
        "explanation": "Every value below the smallest normal float16 (2**-14, about 6.10e-5) became zero, but "
                       "float16 has subnormals down to 2**-24 (about 5.96e-8): 2**-24 is the pattern 0x0001, "
                       "and 3 * 2**-25 rounds to 0x0002. Flush-to-zero is a hardware mode some accelerators "
                       "use for speed, not what torch's cast does; small gradients are exactly the values "
                       "loss scaling tries to keep, and flushing them loses more of them.",
        "hint": "Below exponent 1, shift the full significand (with its implicit 1) right by the extra amount "
                "and round what falls off, as for normal numbers.",
    },
    {
        "slug": "wrong-bias",
        "name": "float16 exponent re-biased with the wrong bias",
        "delta": {"bias": 16},
        "explanation": "float32's exponent bias is 127 and float16's is 15 (2**(5 - 1) - 1), so the exponent "
                       "field changes by 112. Using 16 (or re-biasing by 111) doubles every value: 1.0 came out "
                       "as 0x4000 (2.0) instead of 0x3C00, and the overflow and subnormal thresholds moved too.",
        "hint": "Subtract 127 - 15 = 112 from float32's biased exponent.",
    },
])
