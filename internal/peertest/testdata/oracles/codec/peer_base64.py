import sys, numpy as np, numcodecs
a = (np.arange(1000, dtype="<i4") * 7919) % 100003
sys.stdout.buffer.write(a.tobytes() + numcodecs.Base64().encode(a))
