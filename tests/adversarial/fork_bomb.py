# expect: error|crashed|timeout
import os

while True:
    os.fork()
