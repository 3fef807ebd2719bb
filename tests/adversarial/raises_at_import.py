# expect: error
raise RuntimeError("boom while importing")
