// Package storeurl opens the store a command line names: a directory, a zip
// archive, and (later) an http://, https:// or s3:// URL.
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/zip"
)

// ErrUnsupportedScheme is returned (wrapped) for a URL whose scheme zarrfs
// cannot open.
var ErrUnsupportedScheme = errors.New("unsupported store URL scheme")

// Options configures Open.
type Options struct {
	// Writable opens a directory store for writing; without it Set and
	// Delete fail with store.ErrReadOnly. Zip archives open read-only only.
	Writable bool
}

// Open opens the store spec names:
//
//   - a directory (or file:// URL of one): a directory store;
//   - a regular file that is a zip archive, whatever its name: a zip
//     store, with its root folder detected as package zip describes;
//   - http://, https://, s3:// and any other scheme: an error matching
//     ErrUnsupportedScheme.
//
// The store returned implements io.Closer; close it when done.
func Open(ctx context.Context, spec string, opts Options) (store.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if spec == "" {
		return nil, errors.New("open store: empty store name")
	}
	path := spec
	if scheme, rest, ok := strings.Cut(spec, "://"); ok && isScheme(scheme) {
		if !strings.EqualFold(scheme, "file") {
			return nil, fmt.Errorf("open store %s: %w %q (http, https and s3 stores are not available yet; give a directory or a .zip file)",
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
		return dir.Open(path, dir.Options{ReadOnly: !opts.Writable})
	case fi.Mode().IsRegular():
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
