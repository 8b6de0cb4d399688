package zarr

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestCorpusDatetimes reads the zarrs zarr_python_compat fixtures of the
// numpy.datetime64 and numpy.timedelta64 v3 extension types (no oracle
// reads them) and checks them against the values the fixtures were made
// from, which their names state: datetimes 1970-01-01, NaT, 2005-02-03,
// 2005-02-03T04:05, 2005-02-03T04:05:06 and a missing chunk (NaT fill) in
// the unit of the name; timedeltas 1 year (365 days), 2 weeks, 3 days, 4
// hours, 5 minutes, 6, 7, 8, 9 and 0 seconds and NaT, in the unit of the
// name (the picosecond year wraps, as it does in NumPy).
func TestCorpusDatetimes(t *testing.T) {
	dir := filepath.Join(peertest.Corpus(t), "zarrs", "zarr_python_compat")
	const nat = math.MinInt64
	day := time.Date(2005, 2, 3, 0, 0, 0, 0, time.UTC).Unix()
	dates := []int64{0, nat, day, day + 4*3600 + 5*60, day + 4*3600 + 5*60 + 6, nat}
	spans := []int64{365 * 86400, 14 * 86400, 3 * 86400, 4 * 3600, 5 * 60, 6, 7, 8, 9, 0, nat}
	// perSecond[unit] converts seconds to the unit: multiply by mul, or divide by div (flooring).
	type conv struct{ mul, div int64 }
	units := map[string]conv{
		"Y": {div: -1}, "W": {div: 7 * 86400}, "D": {div: 86400}, "h": {div: 3600}, "m": {div: 60}, "s": {mul: 1},
		"ms": {mul: 1e3}, "10ms": {mul: 1e2}, "us": {mul: 1e6}, "10us": {mul: 1e5}, "ns": {mul: 1e9}, "ps": {mul: 1e12},
	}
	convert := func(secs int64, c conv) int64 {
		switch {
		case secs == nat:
			return nat
		case c.div == -1: // years since 1970 (every date here is early in its year)
			return int64(time.Unix(secs, 0).UTC().Year() - 1970)
		case c.div > 0:
			return secs / c.div
		}
		return int64(uint64(secs) * uint64(c.mul)) // wraps like NumPy's int64
	}
	for _, fixture := range []struct {
		kind, numpy string
		values      []int64
		units       []string
	}{
		{"datetime64", "<M8[%s]", dates, []string{"Y", "W", "D", "h", "m", "s", "ms", "10ms", "us", "10us", "ns"}},
		{"timedelta64", "<m8[%s]", spans, []string{"ms", "10ms", "us", "10us", "ns", "ps"}},
	} {
		for _, unit := range fixture.units {
			name := fmt.Sprintf("%s[%s].zarr", fixture.kind, unit)
			t.Run(name, func(t *testing.T) {
				h := openDir(t, filepath.Join(dir, name))
				n, got := readArray(t, h, "")
				if want := fmt.Sprintf(fixture.numpy, unit); n.Array.DataType().NumPy != want {
					t.Errorf("NumPy type %q, want %q", n.Array.DataType().NumPy, want)
				}
				if len(got) != 8*len(fixture.values) {
					t.Fatalf("%d bytes, want %d elements", len(got), len(fixture.values))
				}
				for i, v := range fixture.values {
					want := convert(v, units[unit])
					if g := int64(binary.LittleEndian.Uint64(got[8*i:])); g != want {
						t.Errorf("element %d = %d, want %d", i, g, want)
					}
				}
			})
		}
	}
}
