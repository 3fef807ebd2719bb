# expect: failed
# The exception message holds a lone surrogate, which cannot be encoded as UTF-8: the report
# and every batch format must still be written, with the character escaped.
def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    raise ValueError("lone surrogate: \ud800, NUL: \x00, bell: \x07")
