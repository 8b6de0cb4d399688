// Package store defines how zarrfs reaches the bytes of a Zarr hierarchy: a
// flat namespace of keys ("a/b/zarr.json", "a/b/c/0/1") mapped to values.
//
// The contract every implementation keeps (checked by package storetest):
//
//   - Every method that can block takes a context first and returns promptly
//     once it is cancelled.
//   - A missing key is an error that matches ErrNotExist (errors.Is); a read
//     never returns (nil, nil).
//   - Keys are checked with ValidateKey before anything touches the backend;
//     an invalid key is an *InvalidKeyError and is never passed through.
//   - Values returned are owned by the caller: an implementation never
//     modifies a slice after returning it, and the caller may modify it.
//   - All methods are safe for concurrent use by multiple goroutines. Reads
//     that run concurrently with a Set or Delete of the same key see either
//     the old or the new value, never a mixture.
//
// Listing, writing, metadata, reading into the caller's buffers and
// closing are separate small interfaces (Lister, PageLister, Writer,
// Stater, InfoGetter, ReaderInto, AllocGetter, Holder, io.Closer) discovered by
// type assertion, as in io.Reader/io.WriterTo: a read-only HTTP store
// implements only Store. A decorator (deadline, fault, diskcache)
// implements Full, and those of ReaderInto and AllocGetter it can serve,
// and Decorate gives it exactly those of the store it wraps, plus those
// it serves on its own (an Extender: the disk cache's GetAlloc).
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"slices"
	"strings"
	"time"
)

// ErrNotExist is returned (possibly wrapped) for a key that is not in the store.
// It is fs.ErrNotExist, so os.IsNotExist-style checks work too.
var ErrNotExist = fs.ErrNotExist

// ErrReadOnly is returned by a Writer whose store was opened read-only.
var ErrReadOnly = errors.New("store: read-only")

// ByteRange selects part of a value. The zero value selects nothing (zero
// bytes from offset 0); All selects the whole value.
//
//   - Suffix false: Length bytes from Offset; Length < 0 means "to the end".
//   - Suffix true: the last Length bytes (Offset is ignored), as an HTTP
//     "Range: bytes=-N" request. Shard indexes at the end of a shard use it.
//
// A range that extends past the end of the value is truncated to the end, as
// io.ReaderAt-style reads are; an Offset past the end yields an empty slice.
type ByteRange struct {
	Offset int64
	Length int64
	Suffix bool
}

// Range returns the range of n bytes starting at off (n < 0: to the end).
func Range(off, n int64) ByteRange { return ByteRange{Offset: off, Length: n} }

// SuffixRange returns the range of the last n bytes.
func SuffixRange(n int64) ByteRange { return ByteRange{Length: n, Suffix: true} }

// All is the range of a whole value.
var All = ByteRange{Length: -1}

// Resolve returns the [start, end) offsets that r selects in a value of
// the given size, clamped to it. It reports an error for negative offsets.
func (r ByteRange) Resolve(size int64) (start, end int64, err error) {
	if r.Suffix {
		if r.Length < 0 {
			return 0, 0, fmt.Errorf("store: negative suffix length %d", r.Length)
		}
		start = size - r.Length
		if start < 0 {
			start = 0
		}
		return start, size, nil
	}
	if r.Offset < 0 {
		return 0, 0, fmt.Errorf("store: negative offset %d", r.Offset)
	}
	start = min(r.Offset, size)
	if r.Length < 0 || r.Length > size-start {
		return start, size, nil
	}
	return start, start + r.Length, nil
}

// String formats r for error messages and logs.
func (r ByteRange) String() string {
	switch {
	case r.Suffix:
		return fmt.Sprintf("bytes=-%d", r.Length)
	case r.Length < 0:
		return fmt.Sprintf("bytes=%d-", r.Offset)
	default:
		return fmt.Sprintf("bytes=%d-%d", r.Offset, r.Offset+r.Length-1)
	}
}

// Store is the read side every store implements.
type Store interface {
	// Get returns the whole value of key.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange returns the part of the value of key that r selects.
	GetRange(ctx context.Context, key string, r ByteRange) ([]byte, error)
	// String names the store for error messages ("dir /data/x.zarr").
	String() string
}

// Lister is implemented by stores that can enumerate their keys.
type Lister interface {
	// ListDir returns the names directly under dir ("" is the root; otherwise
	// a key prefix without a trailing slash): keys holds the names of values
	// stored at dir/NAME, prefixes the names NAME with values below dir/NAME/.
	// Both are sorted. A dir with nothing under it yields empty lists, not an error.
	ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error)
	// ListPrefix returns every key that starts with prefix, sorted.
	ListPrefix(ctx context.Context, prefix string) ([]string, error)
}

// PageLister is implemented by stores whose listings come a page at a
// time, each page one request (S3's ListObjectsV2): a caller that can make
// use of part of a listing asks for one page instead of the whole.
type PageLister interface {
	// ListPrefixPage returns the first keys, sorted, that start with
	// prefix and sort after startAfter ("": from the first), as many as
	// one page holds; more reports that keys may follow the last one
	// returned (it is false only when none do).
	ListPrefixPage(ctx context.Context, prefix, startAfter string) (keys []string, more bool, err error)
}

// Writer is implemented by stores that can be changed.
type Writer interface {
	// Set stores value under key, replacing any previous value.
	Set(ctx context.Context, key string, value []byte) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Info describes a stored value.
type Info struct {
	Size    int64
	ModTime time.Time // zero when the store does not know it
	// ETag is an opaque tag of the value that changes when the value
	// does (HTTP's entity tag); empty when the store has none.
	ETag string
}

// Validates reports whether info can tell a later value of its key from
// this one (see InfoGetter.GetIfChanged).
func (info Info) Validates() bool { return info.ETag != "" || !info.ModTime.IsZero() }

// ErrNotModified is returned by InfoGetter.GetIfChanged for a value that
// has not changed.
var ErrNotModified = errors.New("store: not modified")

// Stater is implemented by stores that can describe a value without reading it.
type Stater interface {
	Stat(ctx context.Context, key string) (Info, error)
}

// InfoGetter is implemented by stores that describe a value as they read
// it: GetRangeInfo is GetRange that also returns the whole value's Info,
// sparing a Stat. Such a store can also tell whether a value changed since
// it was read: GetIfChanged returns the whole value of key and its Info,
// or ErrNotModified and no value when key still holds the value old (the
// Info of an earlier read) describes: the same ETag when old has one (an
// HTTP If-None-Match), else the same modification time (If-Modified-Since,
// to the second, which HTTP dates keep) and, where the store sees it
// without a read, the same size. A value that changed within the second it
// was read may then be taken as unchanged. Without ETag and modification
// time (!old.Validates()) the value is always read.
type InfoGetter interface {
	GetRangeInfo(ctx context.Context, key string, r ByteRange) ([]byte, Info, error)
	GetIfChanged(ctx context.Context, key string, old Info) ([]byte, Info, error)
}

// ReaderInto is implemented by stores that read part of a value straight
// into a buffer of the caller's, as io.ReaderAt does (the directory
// store's files): a reader of uncompressed chunks then copies them once,
// from the store into its output. ReadInto fills p from offset off of the
// value of key and returns the size of the whole value, so that the
// caller can tell a value of an unexpected size. When the value holds
// fewer than off+len(p) bytes it fails with an error matching
// io.ErrUnexpectedEOF (p's contents are then undefined); a missing key
// matches ErrNotExist. ReadInto does not retain p, and writes to it only
// until it returns: a decorator that gives up waiting for the store it
// wraps (a deadline) cannot implement it.
type ReaderInto interface {
	ReadInto(ctx context.Context, key string, p []byte, off int64) (size int64, err error)
}

// AllocGetter is implemented by stores that read a whole value into a
// buffer the caller provides once the value's size is known, so that the
// caller can reuse buffers (a pool of the chunk size) instead of leaving
// one to the garbage collector per read. GetAlloc calls alloc(n) at most
// once, n the value's size, and must get back a slice of exactly length n
// (its contents are overwritten); it returns that slice, or a shorter
// prefix of it when the value shrank while it was read. A store that
// gets a value in a buffer of its own before it knows the size (a disk
// cache fetching a value it does not hold from its store) returns that
// buffer without calling alloc: a copy would cost more than the pool
// saves. (A disk cache that finds the entry it read into alloc's slice
// damaged reads the value again from its store: into the slice when it
// fits, else it returns the buffer of its own.) As for Get, the caller
// owns the result, and GetAlloc uses the buffer only until it returns.
type AllocGetter interface {
	GetAlloc(ctx context.Context, key string, alloc func(n int) []byte) ([]byte, error)
}

// Holder is implemented by a store that keeps copies of what it read
// close by (the disk cache): Holds reports, without a request, whether a
// whole read of key now would be served from such a copy. The engine
// asks it before a far store's read ahead of a reader has told how fast
// the store answers, so that a folder holding an array is read ahead as
// a local disk is, not as a far store (many requests at once).
type Holder interface {
	Holds(key string) bool
}

// Closer is io.Closer; stores holding files or connections implement it.
type Closer = io.Closer

// MaxKeyLength bounds the length of a key in bytes.
const MaxKeyLength = 4096

// InvalidKeyError reports a key that ValidateKey refused.
type InvalidKeyError struct {
	Key    string
	Reason string
}

func (e *InvalidKeyError) Error() string {
	return fmt.Sprintf("invalid store key %q: %s", e.Key, e.Reason)
}

// ValidateKey checks that key is a relative, slash-separated path with no
// empty, "." or ".." segment, no NUL, no backslash and at most MaxKeyLength
// bytes. Every store calls it before touching its backend.
func ValidateKey(key string) error {
	bad := func(reason string) error { return &InvalidKeyError{Key: key, Reason: reason} }
	switch {
	case key == "":
		return bad("empty key")
	case len(key) > MaxKeyLength:
		return bad(fmt.Sprintf("longer than %d bytes", MaxKeyLength))
	case key[0] == '/':
		return bad("absolute path")
	case strings.IndexByte(key, 0) >= 0:
		return bad("contains NUL")
	case strings.IndexByte(key, '\\') >= 0:
		return bad("contains a backslash")
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return bad("empty path segment")
		case ".", "..":
			return bad(fmt.Sprintf("%q path segment", seg))
		}
	}
	return nil
}

// ValidateDir checks a directory argument of ListDir: "" (the root) or a
// valid key.
func ValidateDir(dir string) error {
	if dir == "" {
		return nil
	}
	return ValidateKey(dir)
}

// ValidatePrefix checks a ListPrefix argument: "" or a valid key, optionally
// followed by a single "/".
func ValidatePrefix(prefix string) error {
	return ValidateDir(strings.TrimSuffix(prefix, "/"))
}

// CheckKey is what a store's Get, Stat, Set and Delete do first: it
// validates key and reports ctx's error, if any.
func CheckKey(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	return ctx.Err()
}

// CheckWrite is what a writable store's Set and Delete (op) do first: it
// validates key, refuses with ErrReadOnly when the store s was opened
// read-only, and reports ctx's error, if any.
func CheckWrite(ctx context.Context, s Store, op, key string, readOnly bool) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if readOnly {
		return fmt.Errorf("%s: %s %q: %w", s, op, key, ErrReadOnly)
	}
	return ctx.Err()
}

// CheckListDir is what every ListDir does first: it validates dir and
// reports ctx's error, if any.
func CheckListDir(ctx context.Context, dir string) error {
	if err := ValidateDir(dir); err != nil {
		return err
	}
	return ctx.Err()
}

// CheckListPrefix is what every ListPrefix does first: it validates prefix
// and reports ctx's error, if any.
func CheckListPrefix(ctx context.Context, prefix string) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	return ctx.Err()
}

// DirPrefix returns what the keys in the folder dir start with: dir and a
// slash, or "" for the root.
func DirPrefix(dir string) string {
	if dir == "" {
		return ""
	}
	return dir + "/"
}

// DirEntries is ListDir over a set of keys: the names of the keys directly
// in the folder dir and of the folders below it, each sorted and never
// nil. all holds the keys of the store in any order, or at least those
// that start with DirPrefix(dir).
func DirEntries(dir string, all iter.Seq[string]) (keys, prefixes []string) {
	prefix := DirPrefix(dir)
	seen := make(map[string]bool)
	keys, prefixes = []string{}, []string{}
	for k := range all {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if name, _, isDir := strings.Cut(rest, "/"); isDir {
			if !seen[name] {
				seen[name] = true
				prefixes = append(prefixes, name)
			}
		} else {
			keys = append(keys, rest)
		}
	}
	slices.Sort(keys)
	slices.Sort(prefixes)
	return keys, prefixes
}

// Join joins key segments with "/", skipping empty ones.
func Join(parts ...string) string {
	// One allocation: the length is counted first, and a lone segment
	// is returned as it is.
	n, last := 0, ""
	for _, p := range parts {
		if p != "" {
			n += len(p) + 1
			last = p
		}
	}
	if n <= len(last)+1 {
		return last
	}
	var b strings.Builder
	b.Grow(n - 1)
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(p)
	}
	return b.String()
}
