# numcodecs_bench_program.py makes make bench's data (bench/gen.py: a smooth
# field plus noise, rounded to 1/4096: moderately compressible float32) in
# rows of 1024 elements, and one numcodecs codec from its JSON
# configuration, for peertest.VsPeer.
import json
config, mib = json.loads(args[0]), int(args[1])
rows = mib * (1 << 20) // (1024 * 4)
r = np.arange(rows, dtype=np.float64)[:, None]
c = np.arange(1024, dtype=np.float64)[None, :]
v = np.sin(r / 500) * np.cos(c / 70) + 0.05 * np.random.default_rng(1).standard_normal((rows, 1024))
a = (np.round(v * 4096) / 4096).astype("<f4").ravel()
codec = numcodecs.get_codec(config)
