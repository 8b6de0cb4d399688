# Prints, for each case in the JSON list argv[1] ({"name", "descr", "shape",
# "write_array"}), one line: name, a space, the hex of the .npy header NumPy
# writes. Small arrays go through np.lib.format.write_array; shapes too big
# to allocate (or too many dimensions for NumPy) through the header writer
# that write_array uses. A structured descr is the literal of its field list.
import ast, io, json, sys, warnings
import numpy as np

warnings.simplefilter("ignore")
for case in json.loads(sys.argv[1]):
    buf = io.BytesIO()
    shape = tuple(case["shape"] or ())
    descr = case["descr"]
    # Structured types come as the Python literal of their field list.
    dtype = np.dtype(ast.literal_eval(descr) if descr.startswith("[") else descr)
    if case["write_array"]:
        a = np.zeros(shape, dtype=dtype)
        np.lib.format.write_array(buf, a)
        header = buf.getvalue()[: len(buf.getvalue()) - a.nbytes]
    else:
        d = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
        np.lib.format._write_array_header(buf, d)
        header = buf.getvalue()
    print(case["name"], header.hex())
