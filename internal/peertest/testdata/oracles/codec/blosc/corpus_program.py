# corpus_program.py writes the in-memory bytes of every array.NN.npy of the
# numcodecs blosc fixtures (what numcodecs encoded) to OUT/NN.raw.
import glob, os, sys
import numpy as np
src, out = sys.argv[1], sys.argv[2]
for f in sorted(glob.glob(os.path.join(src, "array.*.npy"))):
    a = np.load(f)
    nn = os.path.basename(f).split(".")[1]
    open(os.path.join(out, nn + ".raw"), "wb").write(a.tobytes(order="A"))
