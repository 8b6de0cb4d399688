import sys, numpy as np, numcodecs
a = np.fromfile(sys.argv[1], dtype="<f4")
sys.stdout.buffer.write(numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1).encode(a))
