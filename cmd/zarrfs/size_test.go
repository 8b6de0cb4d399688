package main

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"4096", 4096, true},
		{"1GiB", 1 << 30, true},
		{"1gib", 1 << 30, true},
		{"512MiB", 512 << 20, true},
		{"512M", 512 << 20, true},
		{"2K", 2048, true},
		{"1GB", 1e9, true},
		{"1.5GiB", 3 << 29, true},
		{"100B", 100, true},
		{" 8 MiB ", 8 << 20, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1XB", 0, false},
		{"GiB", 0, false},
		{"NaN", 0, false},
		{"99999999999TiB", 0, false},
	} {
		got, err := parseSize(c.in)
		if c.ok != (err == nil) || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 1 << 30: "1GiB", 256 << 20: "256MiB", 1536: "1536", 3 << 10: "3KiB"} {
		if got := formatSize(in); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseSize checks that parseSize never panics, never returns a
// negative size, and reads back what formatSize prints.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1GiB", "512M", "1.5GB", "0", "-3", "1e400", "9223372036854775807", "8EiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d", s, n)
		}
		if back, err := parseSize(formatSize(n)); err != nil || back != n {
			t.Fatalf("parseSize(formatSize(%d)) = %d, %v", n, back, err)
		}
	})
}
