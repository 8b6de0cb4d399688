import sys, json, struct, numcodecs, numpy as np
c = numcodecs.get_codec(json.loads(sys.argv[1]))
dec = c.decode(open(sys.argv[2], "rb").read())
flat = dec.reshape(-1)
parts = [struct.pack("<I", len(flat))]
for v in flat:
    b = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    parts += [struct.pack("<I", len(b)), b]
theirs = c.encode(dec)
sys.stdout.buffer.write(struct.pack("<I", len(theirs)) + theirs + b"".join(parts))
