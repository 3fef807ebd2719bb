# expect: failed
# needs: isolation
from pathlib import Path


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    (Path(__file__).parent / "pwned.txt").write_text("was here")
    return 0.0
