package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/zarrfs/zarrfs/store"
)

// StatStore is a network store as BeforeGet sees it.
type StatStore interface {
	store.Stater
	String() string
}

// BeforeGet does what a network store's GetRange does before any request:
// it validates key and r and checks ctx. It returns (nil, err) when the
// call must fail, ([]byte{}, nil) when r selects no bytes of a key that
// exists (asked with s.Stat: a zero-length read of a missing key is still
// ErrNotExist), and (nil, nil) when the request should go ahead.
func BeforeGet(ctx context.Context, s StatStore, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if _, _, err := r.Resolve(1 << 62); err != nil {
		return nil, fmt.Errorf("%s: get %s: %w", s, key, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Length != 0 {
		return nil, nil
	}
	if _, err := s.Stat(ctx, key); err != nil {
		return nil, err
	}
	return []byte{}, nil
}

// maxPrealloc bounds what ReadBody allocates on a server's word: a body
// that says it is longer is read in steps, so a lying Content-Length costs
// no more memory than the bytes that really arrive.
const maxPrealloc = 64 << 20

// ReadBody reads a response body of n bytes (n < 0: unknown, read to the
// end), reporting a body cut short as io.ErrUnexpectedEOF, which IsTransient
// counts as worth a retry.
func ReadBody(r io.Reader, n int64) ([]byte, error) {
	if n < 0 {
		b, err := io.ReadAll(r)
		if b == nil {
			b = []byte{}
		}
		return b, err
	}
	if n <= maxPrealloc {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return b, nil
	}
	var buf bytes.Buffer
	buf.Grow(maxPrealloc)
	got, err := io.Copy(&buf, io.LimitReader(r, n))
	if err != nil {
		return nil, err
	}
	if got < n {
		return nil, io.ErrUnexpectedEOF
	}
	return buf.Bytes(), nil
}
