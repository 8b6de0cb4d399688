package storeurl

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/icechunk"
)

// openIcechunk returns st, or, when st is a local directory or zip archive
// holding an Icechunk repository, its *icechunk.Tree. Remote stores are
// not looked at here: that would cost every plain Zarr store two
// requests; Icechunk looks at them when asked (after no Zarr hierarchy
// was found at their root).
func openIcechunk(ctx context.Context, spec string, st store.Store, opts Options) (store.Store, error) {
	if isRemoteSpec(spec) {
		return st, nil
	}
	return Icechunk(ctx, spec, st, opts)
}

// Icechunk returns st, or the *icechunk.Tree of the Icechunk repository
// st holds (a "repo" file with Icechunk's magic, or
// refs/branch.main/ref.json), opened as Open opened st (spec, opts). The
// stores of its virtual chunks open as Open opens a STORE, with the same
// options; file:// references are followed only when the repository
// itself is on a local disk. On error st is left open.
func Icechunk(ctx context.Context, spec string, st store.Store, opts Options) (store.Store, error) {
	if _, ok := st.(*icechunk.Tree); ok {
		return st, nil
	}
	r, err := icechunk.Open(ctx, st, icechunk.Options{
		AllowFile: !isRemoteSpec(spec),
		OpenURL: func(ctx context.Context, base string, c *icechunk.Container) (store.Store, error) {
			return opts.inContainer(c).openReferenced(ctx, base)
		},
	})
	switch {
	case errors.Is(err, icechunk.ErrNotRepo):
		return st, nil
	case err != nil:
		return nil, fmt.Errorf("open store %s: %w", spec, err)
	}
	return r.Tree(), nil
}

// openReferenced opens the store at base (file:///DIR, http(s)://HOST,
// s3://BUCKET) that a virtual reference points into (Kerchunk's
// references, Icechunk's virtual chunks) as Open opens a STORE with the
// same options, read-only and as it is: no reference set or repository
// is looked for in it.
func (o Options) openReferenced(ctx context.Context, base string) (store.Store, error) {
	o.plain = true
	o.Writable = false
	return open(ctx, base, o)
}

// tigrisEndpoint is where a tigris container without endpoint_url points.
const tigrisEndpoint = "https://fly.storage.tigris.dev"

// inContainer returns o with the settings of Icechunk's virtual chunk
// container c for the stores of the chunks it holds: an S3 container's
// endpoint and region are used where the command line gave none (they
// win over the environment's AWS_ENDPOINT_URL and AWS_REGION, as in
// Icechunk; an --s3-endpoint or --s3-region given on the command line
// wins over them, for a mirror of the data elsewhere), its anonymous and
// path style are added. Credentials still come from the environment: a
// repository never holds them. nil, or an http or local container: o as
// it is.
func (o Options) inContainer(c *icechunk.Container) Options {
	if c == nil {
		return o
	}
	switch c.Store {
	case "s3", "s3_compatible", "tigris":
		if o.S3.Endpoint == "" {
			o.S3.Endpoint = c.Endpoint
			if c.Endpoint == "" && c.Store == "tigris" {
				o.S3.Endpoint = tigrisEndpoint
			}
		}
		if o.S3.Region == "" {
			o.S3.Region = c.Region
		}
		o.S3.Anonymous = o.S3.Anonymous || c.Anonymous
		o.S3.PathStyle = o.S3.PathStyle || c.ForcePathStyle
	}
	return o
}

// isRemoteSpec reports whether spec names an HTTP(S) or S3 store.
func isRemoteSpec(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	if !ok || !isScheme(scheme) {
		return false
	}
	return !strings.EqualFold(scheme, "file")
}
