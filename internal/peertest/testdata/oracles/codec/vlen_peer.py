import sys, numcodecs, numpy as np
c = numcodecs.get_codec({"id": sys.argv[1]})
dec = c.decode(open(sys.argv[2], "rb").read())
vals = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in dec]
sys.stdout.buffer.write(bytes(c.encode(np.array(vals if sys.argv[1] == "vlen-bytes" else [v.decode("utf-8") for v in vals], dtype=object))))
