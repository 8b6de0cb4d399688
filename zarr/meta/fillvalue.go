package meta

import (
	"bytes"
	"slices"
)

// Fill returns the array's fill value as one element of its logical
// content (little-endian), or nil when the metadata has none (a v2
// fill_value of null) or the elements have no fixed size. Views that
// describe the elements to other formats (NetCDF's _FillValue, ENVI's data
// ignore value) take it from here.
func (a *Array) Fill() []byte {
	raw := bytes.TrimSpace(a.fillValue)
	if len(raw) == 0 || string(raw) == "null" || a.dt.Variable() || len(a.fill) != a.dataType.Size {
		return nil
	}
	return slices.Clone(a.fill)
}
