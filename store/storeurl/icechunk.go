package storeurl

import (
	"context"
	"fmt"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/icechunk"
)

// openIcechunk returns st, or the *icechunk.Tree of the Icechunk
// repository st holds (icechunk.Detect: a "repo" file with Icechunk's
// magic, or refs/branch.main/ref.json). The stores of its virtual chunks
// open as Open opens a STORE, with the same options; file:// references
// are followed only when the repository itself is on a local disk.
func openIcechunk(ctx context.Context, spec string, st store.Store, opts Options) (store.Store, error) {
	if !icechunk.Detect(ctx, st) {
		return st, nil
	}
	vopts := opts
	vopts.plain = true
	r, err := icechunk.Open(ctx, st, icechunk.Options{
		AllowFile: !isRemoteSpec(spec),
		OpenURL: func(ctx context.Context, base string) (store.Store, error) {
			return open(ctx, base, vopts)
		},
	})
	if err != nil {
		if c, ok := st.(store.Closer); ok {
			c.Close()
		}
		return nil, fmt.Errorf("open store %s: %w", spec, err)
	}
	return r.Tree(), nil
}

// isRemoteSpec reports whether spec names an HTTP(S) or S3 store.
func isRemoteSpec(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	if !ok || !isScheme(scheme) {
		return false
	}
	return !strings.EqualFold(scheme, "file")
}
