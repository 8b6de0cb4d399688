# shuffle_numcodecs.py has numcodecs' Shuffle shuffle the same 1,008 bytes by
# each element size; it prints {size: hex}. zarrfs decodes those bytes
# with the size given as numcodecs' "elementsize" and as the registry
# examples' "element_size" (zarr-extensions codecs/conditional/README.md).
import json, numcodecs
raw = bytes((i * 37 + 11) % 251 for i in range(1008))
print(json.dumps({n: numcodecs.Shuffle(elementsize=n).encode(raw).tobytes().hex() for n in (1, 2, 3, 4, 8, 16)}))
