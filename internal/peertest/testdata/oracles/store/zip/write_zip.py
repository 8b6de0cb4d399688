# write_zip.py MEMBERS ARCHIVE COMPRESSION has Python's zipfile write the
# members given as JSON [[name, base64], ...] in the file MEMBERS into the
# archive ARCHIVE with the compression COMPRESSION (stored or deflated), in
# the order given.
import base64, json, sys, zipfile
members = json.load(open(sys.argv[1]))
comp = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED}[sys.argv[3]]
with zipfile.ZipFile(sys.argv[2], "w", compression=comp) as zf:
    for name, value in members:
        zf.writestr(name, base64.b64decode(value))
