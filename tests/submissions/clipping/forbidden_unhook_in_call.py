# expect: forbidden
# Trick: inside the entry point, switch the judge's profile hook off (swallowing whatever that
# raises), then call the real clip_grad_norm_ dug out of the guard's closure.
import sys

import torch


def _behind(guard):
    for cell in guard.__closure__ or ():
        inner = cell.cell_contents
        if callable(inner) and inner is not guard and getattr(inner, "__name__", "") == "clip_grad_norm_":
            return inner
    return guard


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    try:
        sys.setprofile(None)
    except BaseException:  # noqa: BLE001 - the attempt is the point
        pass
    real = _behind(getattr(torch.nn.utils, "clip_grad_" + "norm_"))
    return real(parameters, max_norm, norm_type)
