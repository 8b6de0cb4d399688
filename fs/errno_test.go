//go:build linux

package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"syscall"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/logonce"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr"
)

func TestErrnoOf(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want syscall.Errno
	}{
		{"nil", nil, 0},
		{"store missing key", fmt.Errorf("dir /x: get a/zarr.json: %w", store.ErrNotExist), syscall.ENOENT},
		{"engine not exist", zarr.ErrNotExist, syscall.ENOENT},
		{"unsupported codec", fmt.Errorf("array a: %w", codec.Unsupportedf("codec %q", "foo")), syscall.EOPNOTSUPP},
		{"engine unsupported", fmt.Errorf("node b: %w", zarr.ErrUnsupported), syscall.EOPNOTSUPP},
		{"corrupt chunk", fmt.Errorf("chunk c/0: %w", codec.Corruptf("gzip", "truncated")), syscall.EIO},
		{"invalid metadata", fmt.Errorf("a/.zarray: %w", zarr.ErrInvalidMetadata), syscall.EIO},
		{"cancelled", fmt.Errorf("read: %w", context.Canceled), syscall.EINTR},
		{"other", errors.New("connection reset"), syscall.EIO},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := errnoOf(c.err); got != c.want {
				t.Errorf("errnoOf(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func TestErrorLogOncePerCause(t *testing.T) {
	var buf bytes.Buffer
	l := &errorLog{once: logonce.Log{Logger: log.New(&buf, "", 0)}}
	corrupt := fmt.Errorf("array t: chunk c/0/0: %w", codec.Corruptf("zstd", "bad frame"))
	for range 3 {
		if got := l.errno(corrupt); got != syscall.EIO {
			t.Fatalf("errno = %v, want EIO", got)
		}
	}
	if got := l.errno(fmt.Errorf("array u: %w", zarr.ErrUnsupported)); got != syscall.EOPNOTSUPP {
		t.Fatalf("errno = %v, want EOPNOTSUPP", got)
	}
	l.errno(fmt.Errorf("x: %w", store.ErrNotExist))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want 2 (one per cause, none for ENOENT):\n%s", len(lines), buf.String())
	}
	if !strings.Contains(lines[0], "chunk c/0/0") || !strings.Contains(lines[1], "array u") {
		t.Errorf("log lines do not name their causes:\n%s", buf.String())
	}
}
