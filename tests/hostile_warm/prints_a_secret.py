# Hostile (written for grind's own tests): the first of two jobs on one warm worker. It prints a
# secret on stdout and on stderr, as a classmate's debugging prints would (a name, a token, an
# answer), so that the next job, scanning its own memory, can show whether it inherited them.
import sys

SECRET = "GRINDLEAK:" + "SECRET_HEX_PLACEHOLDER"
for _ in range(200):
    print(SECRET)
    print(SECRET, file=sys.stderr)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
