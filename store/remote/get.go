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

// ReadFunc is the one read a network store makes: the range r of key,
// with its retries, returned with the whole value's Info (Size -1 when the
// answer did not say it); when old is set, only if the value changed since
// old said (else an error matching store.ErrNotModified).
type ReadFunc func(ctx context.Context, key string, r store.ByteRange, old *store.Info) ([]byte, store.Info, error)

// Reads gives a network store its reads, Get, GetRange, GetRangeInfo and
// GetIfChanged (store.InfoGetter), from its ReadFunc: each first checks
// key, range and context (BeforeGet), and asks the store's Stat for what
// the read leaves unknown.
type Reads struct {
	s    StatStore
	read ReadFunc
}

// NewReads returns the reads of store s, made with read.
func NewReads(s StatStore, read ReadFunc) Reads { return Reads{s, read} }

// Get returns the whole value of key.
func (g Reads) Get(ctx context.Context, key string) ([]byte, error) {
	return g.GetRange(ctx, key, store.All)
}

// GetRange returns the part of the value of key that r selects.
func (g Reads) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, _, err := g.get(ctx, key, r, nil)
	return b, err
}

// GetRangeInfo is GetRange that also returns the size, Last-Modified and
// ETag of the whole value.
func (g Reads) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	return g.get(ctx, key, r, nil)
}

// GetIfChanged reads key with a conditional GET (If-None-Match with old's
// ETag, else If-Modified-Since): an answer 304 Not Modified is
// store.ErrNotModified.
func (g Reads) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	if !old.Validates() {
		return g.get(ctx, key, store.All, nil)
	}
	return g.get(ctx, key, store.All, &old)
}

func (g Reads) get(ctx context.Context, key string, r store.ByteRange, old *store.Info) ([]byte, store.Info, error) {
	if v, err := BeforeGet(ctx, g.s, key, r); v != nil || err != nil {
		if err != nil {
			return nil, store.Info{}, err
		}
		info, err := g.s.Stat(ctx, key) // known: BeforeGet asked
		return v, info, err
	}
	out, info, err := g.read(ctx, key, r, old)
	if err != nil {
		return nil, info, err
	}
	if info.Size < 0 {
		info, err = g.s.Stat(ctx, key)
	}
	return out, info, err
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
