package store

import (
	"errors"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		r          ByteRange
		size       int64
		start, end int64
		err        bool
	}{
		{All, 10, 0, 10, false},
		{ByteRange{}, 10, 0, 0, false},
		{Range(2, 3), 10, 2, 5, false},
		{Range(2, -1), 10, 2, 10, false},
		{Range(8, 5), 10, 8, 10, false},
		{Range(10, 1), 10, 10, 10, false},
		{Range(50, 1), 10, 10, 10, false},
		{Range(0, 1<<62), 10, 0, 10, false},
		{Range(1<<62, 1<<62), 10, 10, 10, false},
		{SuffixRange(3), 10, 7, 10, false},
		{SuffixRange(30), 10, 0, 10, false},
		{SuffixRange(0), 10, 10, 10, false},
		{SuffixRange(3), 0, 0, 0, false},
		{Range(-1, 2), 10, 0, 0, true},
		{SuffixRange(-1), 10, 0, 0, true},
	}
	for _, tt := range tests {
		start, end, err := tt.r.Resolve(tt.size)
		if (err != nil) != tt.err {
			t.Errorf("%+v.Resolve(%d) error = %v; want error %v", tt.r, tt.size, err, tt.err)
			continue
		}
		if err == nil && (start != tt.start || end != tt.end) {
			t.Errorf("%+v.Resolve(%d) = [%d, %d); want [%d, %d)", tt.r, tt.size, start, end, tt.start, tt.end)
		}
	}
}

func TestByteRangeString(t *testing.T) {
	for r, want := range map[ByteRange]string{
		Range(0, 10):    "bytes=0-9",
		Range(5, -1):    "bytes=5-",
		SuffixRange(16): "bytes=-16",
	} {
		if got := r.String(); got != want {
			t.Errorf("%+v.String() = %q; want %q", r, got, want)
		}
	}
}

func TestValidateKey(t *testing.T) {
	valid := []string{"a", "zarr.json", ".zarray", "a/b/c", "a/c/0/0", "..a", "a..", "...", "ü/ß", "a b/c", strings.Repeat("k", MaxKeyLength)}
	invalid := []string{"", ".", "..", "/a", "a/", "a//b", "./a", "a/.", "a/../b", "a\x00", `a\b`, strings.Repeat("k", MaxKeyLength+1)}
	for _, k := range valid {
		if err := ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%.40q) = %v; want nil", k, err)
		}
	}
	for _, k := range invalid {
		var ike *InvalidKeyError
		if err := ValidateKey(k); !errors.As(err, &ike) || ike.Key != k || ike.Reason == "" {
			t.Errorf("ValidateKey(%.40q) = %v; want an *InvalidKeyError naming it", k, err)
		}
	}
	for dir, ok := range map[string]bool{"": true, "a": true, "a/b": true, "a/": false, "/": false} {
		if err := ValidateDir(dir); (err == nil) != ok {
			t.Errorf("ValidateDir(%q) = %v; want valid %v", dir, err, ok)
		}
	}
	for p, ok := range map[string]bool{"": true, "/": true, "a": true, "a/": true, "a/b/": true, "a//": false, "/a": false, "../": false} {
		if err := ValidatePrefix(p); (err == nil) != ok {
			t.Errorf("ValidatePrefix(%q) = %v; want valid %v", p, err, ok)
		}
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		parts []string
		want  string
	}{
		{nil, ""},
		{[]string{"", ""}, ""},
		{[]string{"a"}, "a"},
		{[]string{"", "a", "", "b/c"}, "a/b/c"},
	}
	for _, tt := range tests {
		if got := Join(tt.parts...); got != tt.want {
			t.Errorf("Join(%q) = %q; want %q", tt.parts, got, tt.want)
		}
	}
}

// FuzzValidateKey checks that every key ValidateKey accepts is a relative
// path of non-empty segments other than "." and "..", without NUL or
// backslash.
func FuzzValidateKey(f *testing.F) {
	for _, k := range []string{"a/b", "", "../x", "a//b", `a\b`, "a/./b", "/x"} {
		f.Add(k)
	}
	for _, k := range HostileKeys(f) {
		f.Add(k.Key)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if ValidateKey(key) != nil {
			return
		}
		if len(key) > MaxKeyLength || strings.ContainsAny(key, "\x00\\") || strings.HasPrefix(key, "/") {
			t.Fatalf("ValidateKey accepted %q", key)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("ValidateKey accepted %q with segment %q", key, seg)
			}
		}
	})
}

// FuzzResolve checks that a resolved range always lies inside the value.
func FuzzResolve(f *testing.F) {
	f.Add(int64(0), int64(-1), false, int64(10))
	f.Add(int64(5), int64(3), true, int64(10))
	f.Fuzz(func(t *testing.T, off, n int64, suffix bool, size int64) {
		if size < 0 {
			return
		}
		r := ByteRange{Offset: off, Length: n, Suffix: suffix}
		start, end, err := r.Resolve(size)
		if err != nil {
			return
		}
		if start < 0 || start > end || end > size {
			t.Fatalf("%+v.Resolve(%d) = [%d, %d)", r, size, start, end)
		}
	})
}
