// Package storeurl opens the store a command line names: a directory, a zip
// archive, an http:// or https:// URL or an s3://bucket/prefix URL (a URL
// ending in .zip is a zip archive read with range requests), or a Kerchunk
// reference set in any of these (kerchunk.go).
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/diskcache"
	"github.com/zarrfs/zarrfs/store/n5"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/zip"
)

// ErrUnsupportedScheme is returned (wrapped) for a URL whose scheme zarrfs
// cannot open.
var ErrUnsupportedScheme = errors.New("storeurl: unsupported store URL scheme")

// Options configures Open.
type Options struct {
	// Writable opens a directory or S3 store for writing; without it Set
	// and Delete fail with store.ErrReadOnly. Zip archives and HTTP stores
	// open read-only only.
	Writable bool

	// Timeout bounds every request to a remote (HTTP or S3) store,
	// retries included (package store/deadline); 0: DefaultTimeout, < 0:
	// no bound.
	Timeout time.Duration
	// Concurrency bounds the requests in flight to a remote store, within
	// which the store adapts their number (0: the store's default).
	Concurrency int
	// Logf logs what a remote store says once (throttling); nil: nothing.
	Logf func(format string, args ...any)
	// Retry says how remote stores retry transient failures.
	Retry remote.Policy
	// S3 configures s3:// stores; empty fields are taken from the
	// environment (see S3Options).
	S3 S3Options
	// Getenv reads the environment; nil: os.Getenv.
	Getenv func(string) string
	// Cache, when set, is the persistent disk cache remote stores read
	// through (package store/diskcache): each is wrapped with its URL
	// (and S3 endpoint) as its name there, outside the request deadline,
	// so that an answer that came too late is still served offline.
	Cache *diskcache.Cache

	// plain opens the store as it is, not looking for an Icechunk
	// repository in it (the stores of virtual chunks).
	plain bool
	// AllowLocalRefs lets a Kerchunk reference set that came over the
	// network (http(s)://, s3://) name local files; without it such a
	// reference fails (package kerchunk).
	AllowLocalRefs bool
}

// DefaultTimeout is the default bound on one remote request.
const DefaultTimeout = 30 * time.Second

// S3Options configures s3:// stores. Each empty field comes from the
// environment as the AWS tools read it:
//
//	Endpoint   AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL (default: AWS)
//	Region     AWS_REGION, then AWS_DEFAULT_REGION
//	keys       AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
//
// With no access key anywhere, the AWS shared credentials file is tried,
// then anonymous access.
type S3Options struct {
	Endpoint  string
	Region    string
	PathStyle bool
	// Anonymous sends unsigned requests, ignoring any credentials.
	Anonymous bool
}

// Open opens the store spec names:
//
//   - a directory (or file:// URL of one): a directory store;
//   - a regular file that is a zip archive, whatever its name: a zip
//     store, with its root folder detected as package zip describes;
//   - an http:// or https:// URL: an HTTP store (read-only, no listing),
//     or, when the path ends in .zip, a zip store over it;
//   - an s3://bucket/prefix URL: an S3 store, or, when the prefix ends in
//     .zip, a zip store over that object;
//   - any other scheme: an error matching ErrUnsupportedScheme.
//
// A directory or zip archive that holds an Icechunk repository (read
// only) is its *icechunk.Tree: branches/, tags/ and snapshots/, each
// entry a snapshot's tree; for remote stores, which Open does not probe,
// see Icechunk.
//
// A local directory or zip archive holding an N5 container (a root
// attributes.json with an "n5" version, no zarr.json) is shown as the
// Zarr v3 hierarchy that reads it (store/n5).
//
// Every request to a remote store is bounded by opts.Timeout. The store
// returned implements io.Closer; close it when done.
func Open(ctx context.Context, spec string, opts Options) (store.Store, error) {
	st, err := open(ctx, spec, opts)
	if err != nil || opts.Writable || opts.plain {
		return st, err
	}
	tree, err := openIcechunk(ctx, spec, st, opts)
	if err == nil && tree == st && !isRemoteSpec(spec) {
		// A local N5 container is shown as the Zarr v3 hierarchy that
		// reads it (store/n5).
		tree, _, err = n5.Open(ctx, st)
	}
	if err != nil {
		if c, ok := st.(store.Closer); ok {
			c.Close()
		}
	}
	return tree, err
}

// open opens the store spec names, as Open does, without looking for an
// Icechunk repository in it.
func open(ctx context.Context, spec string, opts Options) (store.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if spec == "" {
		return nil, errors.New("open store: empty store name")
	}
	path := spec
	if scheme, rest, ok := strings.Cut(spec, "://"); ok && isScheme(scheme) {
		switch strings.ToLower(scheme) {
		case "http", "https", "s3":
			if p := remotePath(spec); !opts.Writable && !opts.plain && (isRefsJSONName(p) || isRefsParquetName(p)) {
				return openRemoteRefs(ctx, spec, p, opts)
			}
			if strings.ToLower(scheme) == "s3" {
				return openS3(ctx, spec, opts)
			}
			return openHTTP(ctx, spec, opts)
		case "file":
		default:
			return nil, fmt.Errorf("open store %s: %w %q (give a directory, a .zip file, an http(s):// or an s3:// URL)",
				spec, ErrUnsupportedScheme, scheme)
		}
		u, err := url.Parse(spec)
		if err != nil || (u.Host != "" && u.Host != "localhost") || rest == "" {
			return nil, fmt.Errorf("open store %s: a file URL needs an absolute local path (file:///path)", spec)
		}
		path = u.Path
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	switch {
	case fi.IsDir():
		st, err := dir.Open(path, dir.Options{ReadOnly: !opts.Writable})
		if err != nil || opts.Writable || opts.plain {
			return st, err
		}
		return localRefsDir(ctx, st, path, opts)
	case fi.Mode().IsRegular():
		if !opts.plain {
			if refs, ok, err := sniffLocalRefs(path, opts); ok || err != nil {
				return refs, err
			}
		}
		s, err := zip.OpenFile(path, zip.Options{})
		if err != nil {
			if !strings.HasSuffix(strings.ToLower(path), ".zip") {
				return nil, fmt.Errorf("open store %s: neither a directory nor a zip archive (%w)", path, err)
			}
			return nil, err
		}
		if opts.Writable {
			s.Close()
			return nil, fmt.Errorf("open store %s: zip archives open read-only: %w", path, store.ErrReadOnly)
		}
		return s, nil
	default:
		return nil, fmt.Errorf("open store %s: neither a directory nor a zip archive (mode %v)", path, fi.Mode())
	}
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or "."), so that a relative path such as
// "x://y" made of other characters is not taken for a URL.
func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
