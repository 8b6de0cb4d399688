package remote

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadBody(t *testing.T) {
	big := strings.Repeat("x", maxPrealloc+10)
	for _, c := range []struct {
		name string
		body string
		n    int64
		want string
		err  error
	}{
		{"exact", "hello", 5, "hello", nil},
		{"unknown length", "hello", -1, "hello", nil},
		{"empty, unknown length", "", -1, "", nil},
		{"cut short", "hel", 5, "", io.ErrUnexpectedEOF},
		{"longer than said: only what was said", "hello!", 5, "hello", nil},
		{"above the preallocation bound", big, int64(len(big)), big, nil},
		{"a lying 1 TB length", "hello", 1 << 40, "", io.ErrUnexpectedEOF},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadBody(strings.NewReader(c.body), c.n)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err == nil && (got == nil || !bytes.Equal(got, []byte(c.want))) {
				t.Errorf("got %d bytes, want %d", len(got), len(c.want))
			}
		})
	}
}
