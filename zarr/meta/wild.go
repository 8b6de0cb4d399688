package meta

import (
	"errors"
	"fmt"

	"github.com/zarrfs/zarrfs/codec"
)

// Where the readers of data from other tools disagree, zarrfs follows the
// majority of the readers other than the writer's own (README, "Data from
// other tools"):
//
//   - netCDF-c 4.9.0 writes NCZarr char variables as "<U1" holding one byte
//     per character; zarr-python and GDAL refuse the chunks, and so does
//     zarrfs, saying why (ExplainChunkError).
//   - netCDF-c writes little-endian bytes under ">i4" (a variable with
//     _Endianness "big"); zarr-python and GDAL read the bytes as the dtype
//     says, and so does zarrfs.
//   - GDAL reads a uint64 fill value of 2^64−2 as 2^63−1; zarr-python and
//     netCDF-c read it exactly, and so does zarrfs (parseFillValue).

// ExplainChunkError adds to a chunk's decoding error the cause a user
// needs when it is a known writer's mistake.
func (a *Array) ExplainChunkError(err error) error {
	var ce *codec.CorruptError
	if a.dt.kind != 'U' || a.layout.chunkElems == 0 || !errors.As(err, &ce) {
		return err
	}
	want := a.layout.chunkElems * int64(a.dt.Size)
	if ce.Reason != fmt.Sprintf("decoded %d bytes, want %d", want/4, want) {
		return err
	}
	return fmt.Errorf("%w (one byte per character where %s needs four: netCDF-c 4.9.0 writes NCZarr char data so; "+
		"zarr-python and GDAL refuse it too, netCDF-c itself reads it as characters)", err, a.dt.spelling)
}
