package zip

import (
	archivezip "archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/zarrfs/zarrfs/store"
)

// CreateOptions configures Create.
type CreateOptions struct {
	// Deflate compresses members with Deflate; otherwise they are Stored
	// (as zarr-python's ZipStore does by default).
	Deflate bool
	// Level is the Deflate level (flate.BestSpeed … flate.BestCompression);
	// 0 means flate.DefaultCompression.
	Level int
	// Name names the archive in String and errors.
	Name string
}

// ErrWriteOnce is returned by Writer.Set for a key already written and by
// Writer.Delete for a key already written: members of an archive being
// streamed cannot be replaced or removed.
var ErrWriteOnce = errors.New("zip: a member cannot be replaced or deleted once written")

// Writer streams a new zip archive: each Set appends a member, Close writes
// the central directory. It implements store.Writer and io.Closer and is
// safe for concurrent use (members are written one at a time).
type Writer struct {
	name    string
	method  uint16
	mu      sync.Mutex
	zw      *archivezip.Writer
	written map[string]bool
	closed  bool
	err     error // the first write error; the archive is then unusable
}

var (
	_ store.Writer = (*Writer)(nil)
	_ io.Closer    = (*Writer)(nil)
)

// Create starts a zip archive written to w. Close finishes it (it does not
// close w).
func Create(w io.Writer, opts CreateOptions) (*Writer, error) {
	zw := archivezip.NewWriter(w)
	method := archivezip.Store
	if opts.Deflate {
		method = archivezip.Deflate
		level := opts.Level
		if level == 0 {
			level = flate.DefaultCompression
		}
		if level < flate.HuffmanOnly || level > flate.BestCompression {
			return nil, fmt.Errorf("zip writer: deflate level %d out of range", opts.Level)
		}
		zw.RegisterCompressor(archivezip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, level)
		})
	}
	name := opts.Name
	if name == "" {
		name = "(writer)"
	}
	return &Writer{name: name, method: method, zw: zw, written: make(map[string]bool)}, nil
}

// String names the archive being written.
func (w *Writer) String() string { return "zip writer " + w.name }

// Set appends a member named key holding value. A key can be set once.
func (w *Writer) Set(ctx context.Context, key string, value []byte) error {
	if err := store.CheckKey(ctx, key); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return fmt.Errorf("%s: set %q: %w", w, key, errClosed)
	case w.err != nil:
		return fmt.Errorf("%s: set %q after an earlier failure: %w", w, key, w.err)
	case w.written[key]:
		return fmt.Errorf("%s: set %q: %w", w, key, ErrWriteOnce)
	}
	fw, err := w.zw.CreateHeader(&archivezip.FileHeader{Name: key, Method: w.method, Modified: time.Now()})
	if err == nil {
		_, err = fw.Write(value)
	}
	if err != nil {
		w.err = err
		return fmt.Errorf("%s: set %q: %w", w, key, err)
	}
	w.written[key] = true
	return nil
}

// errClosed is returned for writes after Close.
var errClosed = errors.New("zip: archive already closed")

// Delete succeeds for a key that was never written (there is nothing to
// delete) and fails with ErrWriteOnce for one that was.
func (w *Writer) Delete(ctx context.Context, key string) error {
	if err := store.CheckKey(ctx, key); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written[key] {
		return fmt.Errorf("%s: delete %q: %w", w, key, ErrWriteOnce)
	}
	return nil
}

// Close writes the central directory, finishing the archive. It does not
// close the underlying io.Writer. Closing twice is an error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("%s: %w", w, errClosed)
	}
	w.closed = true
	if w.err != nil {
		return fmt.Errorf("%s: not finished after an earlier failure: %w", w, w.err)
	}
	if err := w.zw.Close(); err != nil {
		return fmt.Errorf("%s: %w", w, err)
	}
	return nil
}
