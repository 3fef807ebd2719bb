# expect: failed
# A result object that claims to equal anything. The judge never calls __eq__ on it.
class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __float__(self):
        return 13.0


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return Anything()
