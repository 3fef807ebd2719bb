# expect: error
def clip_grad_norm(parameters, max_norm, norm_type=2.0):  # no trailing underscore
    return 0
