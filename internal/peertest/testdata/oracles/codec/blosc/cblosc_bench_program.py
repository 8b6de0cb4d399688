# cblosc_bench_program.py makes the bench data (a smooth field plus noise:
# moderately compressible float32) and numcodecs.Blosc (c-blosc 1.x) for
# one configuration, decoding on one thread, for peertest.VsPeer.
from numcodecs import blosc
cname, shuffle, mib = args[0], int(args[1]), int(args[2])
n = mib * (1 << 20) // 4
rng = np.random.default_rng(42)
x = np.linspace(0, 60, n, dtype=np.float64)
a = (np.sin(x) * 100 + np.cos(x * 7.3) * 20 + 280 + rng.normal(0, 0.05, n)).astype("<f4")
blosc.use_threads = False
blosc.set_nthreads(1)
codec = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle)
