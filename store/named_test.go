package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/zarrfs/zarrfs/store"
)

type named string

func (n named) String() string { return string(n) }

// TestErrorf: a store's name appears once in an error, whoever added it.
func TestErrorf(t *testing.T) {
	s := named("http http://h/x.zarr")
	for _, tc := range []struct {
		err    error
		format string
		args   []any
		want   string
	}{
		{errors.New("boom"), "", nil, "http http://h/x.zarr: boom"},
		{errors.New("boom"), "node %q", []any{"/a"}, `http http://h/x.zarr: node "/a": boom`},
		// The store's own error: the name moves in front of the context.
		{fmt.Errorf("http http://h/x.zarr: get a/zarr.json: %w", store.ErrNotExist), "node %q", []any{"/a"},
			`http http://h/x.zarr: node "/a": get a/zarr.json: file does not exist`},
		// Already named by a layer between: once.
		{fmt.Errorf("http http://h/x.zarr: node %q: http http://h/x.zarr: get: refused", "/a"), "", nil,
			`http http://h/x.zarr: node "/a": get: refused`},
		{fmt.Errorf("wrapped: %w", fmt.Errorf("http http://h/x.zarr: get: refused")), "", nil,
			`http http://h/x.zarr: wrapped: get: refused`},
		// A name without ": " after it is another sentence: left alone.
		{errors.New("http http://h/x.zarr cannot list its keys"), "listing", nil,
			`http http://h/x.zarr: listing: http http://h/x.zarr cannot list its keys`},
	} {
		err := store.Errorf(s, tc.err, tc.format, tc.args...)
		if err.Error() != tc.want {
			t.Errorf("%q: %q; want %q", tc.err, err, tc.want)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%q: does not wrap it", tc.err)
		}
	}
}
