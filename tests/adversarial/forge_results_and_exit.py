# expect: crashed
import json
import os

json.dump({"token": "0" * 32, "subjects": {"learner": {"cases": {}}}, "observations_sha256": ""},
          open("result.json", "w"))
os._exit(0)
