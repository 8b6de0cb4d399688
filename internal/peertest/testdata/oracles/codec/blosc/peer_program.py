# peer_program.py encodes every case's input with numcodecs.Blosc, with 4
# threads for buffers above 1 MiB (through
# ctypes and the same libblosc when the size is not a multiple of the
# typesize, which numcodecs cannot express), and decodes every Go-encoded
# chunk with numcodecs, reporting whether it matches the input.
import ctypes, json, os, sys
import numpy as np
import numcodecs
from numcodecs import blosc
blosc.set_nthreads(4)
lib = ctypes.CDLL("libblosc.so.1")
lib.blosc_compress_ctx.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t,
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
d = sys.argv[1]
cases = json.load(open(os.path.join(d, "cases.json")))
inputs = open(os.path.join(d, "in.bin"), "rb").read()
gochunks = open(os.path.join(d, "go.bin"), "rb").read()
report, out = {}, open(os.path.join(d, "py.bin"), "wb")
pos = 0
for c in cases:
    name, ts = c["name"], c["typesize"]
    data = inputs[c["in"][0]:c["in"][1]]
    if len(data) % ts == 0:
        # Threaded c-blosc (big buffers) writes blocks out of order.
        numcodecs.blosc.use_threads = len(data) > 1 << 20
        arr = np.frombuffer(data, dtype="u1" if ts == 1 else "V%d" % ts)
        enc = numcodecs.Blosc(cname=c["cname"], clevel=c["clevel"], shuffle=c["shuffle"], blocksize=c["blocksize"]).encode(arr)
    else:
        sh = c["shuffle"]
        if sh == -1:
            sh = 2 if ts == 1 else 1
        dest = ctypes.create_string_buffer(len(data) + 16)
        n = lib.blosc_compress_ctx(c["clevel"], sh, ts, len(data), data, dest, len(data) + 16,
                                   c["cname"].encode(), c["blocksize"], 1)
        if n <= 0:
            raise SystemExit("blosc_compress_ctx failed for %s: %d" % (name, n))
        enc = dest.raw[:n]
    enc = bytes(enc)
    out.write(enc)
    r = {"py": [pos, pos + len(enc)]}
    pos += len(enc)
    try:
        dec = blosc.decompress(gochunks[c["go"][0]:c["go"][1]])
        r["go"] = "ok" if bytes(dec) == data else "decoded %d bytes that differ from the input" % len(dec)
    except Exception as e:
        r["go"] = "error: %r" % (e,)
    report[name] = r
out.close()
json.dump(report, open(os.path.join(d, "report.json"), "w"))
