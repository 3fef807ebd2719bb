# expect: error
