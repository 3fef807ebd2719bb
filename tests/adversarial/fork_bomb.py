# expect: error|crashed|timeout
# needs: pids
import os

while True:
    os.fork()
