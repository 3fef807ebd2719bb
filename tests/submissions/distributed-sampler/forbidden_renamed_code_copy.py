# expect: forbidden
# A copy of DistributedSampler's own methods under new code names (code.replace(co_name=...)): still torch's code.
import types, torch.utils.data.sampler as S
_orig = [c for c in S.Sampler.__subclasses__() if c.__name__ == "DistributedSampler"][0]
def _copy(f):
    return types.FunctionType(f.__code__.replace(co_name="x_" + f.__code__.co_name), f.__globals__, None, f.__defaults__, f.__closure__)
class Mine:
    __init__ = _copy(_orig.__init__)
    __iter__ = _copy(_orig.__iter__)
    __len__ = _copy(_orig.__len__)
    def set_epoch(self, e): self.epoch = e
def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    s = Mine(range(length), num_replicas=world_size, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
    s.set_epoch(epoch)
    return list(s)
