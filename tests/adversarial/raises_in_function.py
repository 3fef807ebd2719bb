# expect: failed
def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters]
    return grads[99]
