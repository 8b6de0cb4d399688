package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes parseSize accepts, as dd(1) reads them: K, M,
// G, T and KiB … TiB are powers of 1024; KB … TB powers of 1000.
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// parseSize parses a byte size such as "1GiB", "512M", "1.5GB" or "4096".
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, factor = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.factor
			break
		}
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt64/factor {
			return 0, fmt.Errorf("size %q out of range", s)
		}
		return n * factor, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, fmt.Errorf("invalid size %q (want e.g. 1GiB, 512MiB, 1000000)", s)
	}
	if v := f * float64(factor); v < math.MaxInt64 {
		return int64(v), nil
	}
	return 0, fmt.Errorf("size %q out of range", s)
}

// sizeValue is a pflag.Value holding a byte size.
type sizeValue int64

func (v *sizeValue) String() string { return formatSize(int64(*v)) }
func (v *sizeValue) Type() string   { return "size" }

func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v = sizeValue(n)
	return nil
}

// formatSize prints n with the largest binary unit that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.factor == 0 {
			return strconv.FormatInt(n/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
