# expect: forbidden
# Runs torch's own source file for clip_grad_norm_ under another file name, so the function it
# makes is "the learner's code" by origin; its code objects are copies of torch's, and are named.
import torch.nn.utils.clip_grad as _clip_module

_namespace = {"__name__": "my_clipping", "__package__": "torch.nn.utils"}
with open(_clip_module.__file__, encoding="utf-8") as _source:
    exec(compile(_source.read(), "<my clipping>", "exec"), _namespace)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return _namespace["clip_grad" + "_norm_"](parameters, max_norm, norm_type)
