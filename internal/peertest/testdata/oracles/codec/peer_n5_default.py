import gzip, struct, sys, numpy as np, zarr, numcodecs
d = sys.argv[1]
z = zarr.open_array(zarr.N5Store(d), mode="w", shape=(5, 7), chunks=(2, 3), dtype="<i2", compressor=numcodecs.GZip(level=1), fill_value=0)
z[:] = np.arange(35, dtype="<i2").reshape(5, 7) * 37 - 400
a = z[:].T  # the Zarr view: N5's order of dimensions
blocks = {}
for bx in range(3):
    for by in range(3):
        blocks[(bx, by)] = open("%s/%d/%d" % (d, bx, by), "rb").read()
# The edge block (2, 2) truncated to x 6, y 4: one element.
blocks[(2, 2)] = struct.pack(">HHII", 0, 2, 1, 1) + gzip.compress(np.array([a[6, 4]], dtype=">i2").tobytes())
for bx in range(3):
    for by in range(3):
        chunk = np.zeros((3, 2), dtype="<i2")
        part = a[3 * bx:3 * bx + 3, 2 * by:2 * by + 2]
        if (bx, by) == (2, 2):
            part = part[:1, :1]
        chunk[:part.shape[0], :part.shape[1]] = part
        b = blocks[(bx, by)]
        sys.stdout.buffer.write(struct.pack("<I", len(b)) + b + chunk.tobytes())
