import sys, os, numcodecs
for p in sys.argv[1:]:
    codec = numcodecs.GZip() if os.path.basename(p).startswith("gzip") else numcodecs.Zlib()
    try:
        b = bytes(codec.decode(open(p, "rb").read()))
    except Exception as e:
        print(os.path.basename(p), "error", type(e).__name__)
        continue
    open(p + ".out", "wb").write(b)
    print(os.path.basename(p), "ok", len(b))
