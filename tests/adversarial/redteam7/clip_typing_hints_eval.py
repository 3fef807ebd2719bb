# hostile (redteam7, text becomes code without exec/eval/compile/importlib): clipping, torch's own
# clip_grad_norm_ doing the work, PASSED in marks mode.
# How: typing.get_type_hints(f) evaluates each string annotation with eval() in f's globals and
# returns whatever is callable. f.__annotations__ is not an attribute the scan knows, and the
# annotation text is assembled from harmless pieces ("__im" + "port__('g' + 'c').get_" + "objects"),
# so any expression runs: here gc.get_objects and torch.nn.utils.clip_grad_norm_. The Guards
# instance on the heap then gets an instance attribute _on_learner_behalf answering False (as in
# clip_pydoc_locate_forbidden.py). judge/introspection.py's docstring says "text cannot become code,
# or a module, without one of them" (__import__, importlib, getattr, exec/eval/compile): typing's
# ForwardRef (and doctest, which runs a docstring's examples) is another. A list of such doors
# cannot be finished: pydoc.locate, pkgutil.resolve_name, logging.config's BaseConfigurator.resolve,
# torch._utils._import_dotted_name and torch.load(weights_only=False) of bytes built in the file
# all pass the scan too (checked with judge.introspection.refusal).
# Control: clip_pydoc_locate_forbidden.py's control (the guard left alone) is FORBIDDEN.
# Expected: FORBIDDEN. Observed (2026-12-03): marks PASSED. Real bypass.
import typing

import torch


def _text():
    pass


# Any expression, as text: typing.get_type_hints evaluates a string annotation with eval() in the
# function's globals and hands back whatever is callable. Pieces of harmless text, joined.
_text.__annotations__ = {
    "return": "__im" + "port__('g' + 'c').get_" + "objects",
    "theirs": "__im" + "port__('torch').nn.utils.clip_grad_" + "norm_",
}
_hints = typing.get_type_hints(_text)
_objects, _theirs = _hints["return"], _hints["theirs"]


def _never(frame):
    return False


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    for guards in [o for o in _objects() if type(o).__name__ == "Guards"]:
        guards._on_learner_behalf = _never
    return _theirs(parameters, max_norm, norm_type)
