# expect: error|crashed|timeout
import threading
import time

while True:
    threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()
