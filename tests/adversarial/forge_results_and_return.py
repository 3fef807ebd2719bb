# expect: crashed
# Writes a result file first; the runner refuses to write a second one, so no honest result exists.
import json

json.dump({"token": "0" * 32, "subjects": {}}, open("result.json", "w"))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
