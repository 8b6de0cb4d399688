# decode_bench_program.py makes, for peertest.VsPeer, the data of one kind of
# frame (args[0]) and the numcodecs codec that writes it (C zstd, as under
# zarr-python): "floats", a tile of layouts.py's 8192-column field plus
# full-precision noise, zstd level 3 (mostly Huffman-coded literals, few
# sequences); "quantised", make bench's data (bench/gen.py: rounded to
# 1/4096), zstd level 3 (many short sequences); "planes", the floats
# byte-shuffled in blocks of 256 KiB, each 64 KiB byte plane one frame at
# zstd level 9, as c-blosc 1.21 writes Blosc zstd + shuffle at clevel 5
# (long runs in the exponent and high mantissa planes).
kind, mib = args[0], int(args[1])
rows = mib * (1 << 20) // (1024 * 4)
r = np.arange(rows, dtype=np.float64)[:, None]
c = np.arange(1024, dtype=np.float64)[None, :]
rng = np.random.default_rng(1)
if kind == "quantised":
    v = np.sin(r / 500) * np.cos(c / 70) + 0.05 * rng.standard_normal((rows, 1024))
    a = (np.round(v * 4096) / 4096).astype("<f4").ravel()
    codec = numcodecs.Zstd(level=3)
else:
    a = (np.sin(r / 8192 * 6) * np.cos(c / 8192 * 6) + rng.standard_normal((rows, 1024), dtype=np.float32) * 0.01).astype("<f4").ravel()
    codec = numcodecs.Zstd(level=3)
    if kind == "planes":
        blocks = a.view(np.uint8).reshape(-1, (256 << 10) // 4, 4)
        a = np.ascontiguousarray(blocks.transpose(0, 2, 1)).ravel()
        codec = numcodecs.Zstd(level=9)
