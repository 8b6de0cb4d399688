package remote

import (
	"context"
	"fmt"

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
