# compressed_refs.py writes, with Python's gzip, bz2, lzma and (python3-
# zstandard) zstd, a JSON reference file compressed as fsspec opens it
# (compression inferred from the name), plus copies whose names say
# nothing; fsspec's ReferenceFileSystem, when present, must read a/0 of
# each as "234" (the files are what fsspec takes).
import sys, os, gzip, bz2, lzma, json
d = sys.argv[1]
os.chdir(d)  # fsspec resolves the relative reference against the working folder
refs = json.dumps({".zgroup": json.dumps({"zarr_format": 2}), "a/0": ["data.bin", 2, 3]}).encode()
open(os.path.join(d, "data.bin"), "wb").write(b"0123456789")
out = {"gz": gzip.compress(refs), "bz2": bz2.compress(refs), "xz": lzma.compress(refs)}
try:
    import zstandard
    out["zst"] = zstandard.ZstdCompressor().compress(refs)
except ImportError:
    pass
for ext, b in out.items():
    open(os.path.join(d, "refs.json." + ext), "wb").write(b)
    open(os.path.join(d, "noname-" + ext), "wb").write(b)
try:
    import fsspec
except ImportError:
    fsspec = None
for ext in out:
    ok = "nofsspec"
    if fsspec is not None:
        fs = fsspec.filesystem("reference", fo=os.path.join(d, "refs.json." + ext),
                               target_options={"compression": "infer"}, remote_protocol="file")
        ok = fs.cat("a/0").decode()
    print(ext, ok)
