import sys, json, struct, numcodecs, numpy as np
c = numcodecs.get_codec(json.loads(sys.argv[1]))
dec = c.decode(open(sys.argv[2], "rb").read())
flat = dec.reshape(-1)
assert dec.shape == (2, 5), dec.shape
parts = [struct.pack("<I", len(flat))]
for v in flat:
    b = v.encode("utf-8")
    parts += [struct.pack("<I", len(b)), b]
theirs = c.encode(np.array(list(flat), dtype=object).reshape(2, 5))
sys.stdout.buffer.write(struct.pack("<I", len(theirs)) + theirs + b"".join(parts))
