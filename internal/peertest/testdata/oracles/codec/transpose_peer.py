import sys, json, numpy as np
for line in open(sys.argv[1]).read().splitlines():
    p, shape, order = line.split(" ")
    a = np.fromfile(p, dtype="<i4").reshape(json.loads(shape))
    np.ascontiguousarray(np.transpose(a, json.loads(order))).tofile(p + ".t")
