// Package fs is zarrfs's FUSE layer: it shows a Zarr hierarchy opened by
// package zarr as a read-only directory tree (the layout in README.md;
// docs/ARCHITECTURE.md places it among the packages). Groups are
// directories; an array is a directory holding its metadata documents byte
// for byte, its decoded contents as `data` and `data.npy` (or `data.txt`
// for variable-length elements) and an `info.txt` summary. Arrays carry
// user.zarr.* extended attributes.
//
// It is the only package of zarrfs that imports go-fuse, and the one place
// where engine errors become errno values.
package fs
