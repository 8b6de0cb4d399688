package view

import (
	"slices"
	"testing"
)

// TestCFTimes decodes CF time coordinates as band names show them.
func TestCFTimes(t *testing.T) {
	for _, c := range []struct {
		values   []float64
		units    string
		calendar string
		want     []string // nil: not decoded
	}{
		{[]float64{0, 1, 23}, "hours since 2026-01-01 00:00:00", "proleptic_gregorian", []string{"2026-01-01 00:00", "2026-01-01 01:00", "2026-01-01 23:00"}},
		{[]float64{0, 31}, "days since 2000-01-01", "", []string{"2000-01-01", "2000-02-01"}},
		{[]float64{0.5}, "days since 2000-1-1 0:0:0", "standard", []string{"2000-01-01 12:00"}},
		{[]float64{90}, "seconds since 1970-01-01T00:00:00Z", "gregorian", []string{"1970-01-01 00:01:30"}},
		{[]float64{1}, "minutes since 2020-02-29 23:59 UTC", "", []string{"2020-03-01"}},
		{[]float64{1e9}, "nanoseconds since 2000-01-01 00:00:00.5", "", []string{"2000-01-01 00:00:01"}},
		{[]float64{0}, "days since 2000-01-01", "noleap", nil},
		{[]float64{0}, "days since 2000-01-01 00:00:00 +01:00", "", nil},
		{[]float64{0}, "metres", "", nil},
		{[]float64{0}, "fortnights since 2000-01-01", "", nil},
		{[]float64{0}, "days since 2000-13-01", "", nil},
		{[]float64{0}, "days since 1000-01-01", "", nil},
		{[]float64{1e300}, "days since 2000-01-01", "", nil},
		{[]float64{0}, "days since x", "", nil},
	} {
		got, ok := cfTimes(c.values, c.units, c.calendar)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("cfTimes(%v, %q, %q) = %q, %v; want %q", c.values, c.units, c.calendar, got, ok, c.want)
		}
	}
}

// FuzzCFTimes: any units and calendar decode or are refused, never panic.
func FuzzCFTimes(f *testing.F) {
	for _, s := range []string{"hours since 2026-01-01 00:00:00", "days since 2000-1-1", "s since 9999-12-31T23:59:59Z",
		"days since -5-1-1", "days since 2000-01-01 25:00", "days since 2000-01-01 ::", " since ", "ns since 1677-09-21 00:12:43.145224192"} {
		f.Add(s, 1.5)
	}
	f.Fuzz(func(t *testing.T, units string, v float64) {
		if text, ok := cfTimes([]float64{v, 0}, units, ""); ok && len(text) != 2 {
			t.Fatalf("%d texts for 2 values", len(text))
		}
	})
}
