// Package kerchunk is the zarrfs store over a Kerchunk reference set: a
// Zarr (v2) hierarchy whose metadata documents are held in the reference
// set itself and whose chunks are byte ranges of other files (NetCDF-4,
// HDF5, TIFF …) reached through zarrfs's other stores.
//
// Two encodings are read, as fsspec's ReferenceFileSystem reads them:
//
//   - a JSON reference file (OpenJSON): version 0, {"key": value, …}, or
//     version 1, {"version": 1, "templates": {…}, "gen": […], "refs": {…}};
//     a value is an inline string, "base64:…" bytes, [url] (a whole file)
//     or [url, offset, length]. Templates ("{{name}}", "{{f(c='x')}}") and
//     generators ("gen": keys, URLs, offsets and lengths over the product of
//     "dimensions") are rendered by a small subset of Jinja (template.go).
//   - a Parquet reference directory (OpenParquet): .zmetadata holds the
//     metadata documents and "record_size"; ARRAY/refs.N.parq holds the
//     references of chunks N×record_size … (N+1)×record_size−1 of ARRAY in
//     C order, in columns path, offset, size and raw (parquet.go).
//
// A reference's URL may be http(s)://, s3://, file://, an absolute local
// path or a path relative to the reference set's own location
// (Options.Base). Each is read through a store that Options.Open returns
// for its root (the scheme and host, the bucket, or "/" for local files),
// opened once and shared by every reference into it, so that range reads,
// limits on requests in flight, retries and timeouts are those of
// zarrfs's remote stores. A reference set that came over the network may
// not name local files unless Options.AllowLocal says so; other schemes
// (gs://, memory://, chained fsspec URLs) are refused.
//
// A bad reference (an unknown scheme, a negative offset, a range past the
// end of its file, a target that cannot be read) is an error matching
// ErrBadReference for that key only, never store.ErrNotExist: a chunk whose
// bytes cannot be had must not read as the fill value. Generators are
// expanded up to MaxGenEntries entries in all; a larger one is looked up
// key by key when its key template is names and text ("data/{{i}}.{{j}}",
// lazy.go), and otherwise refused: every key under the folder its key
// template names then fails with that error instead of reading as missing.
package kerchunk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/store"
)

// ErrBadReference is matched (errors.Is) by every error about one
// reference: its syntax, its URL, its range or reading its target.
var ErrBadReference = errors.New("kerchunk: bad reference")

// ErrNotAllowed is matched by the error of a reference whose URL the
// options do not allow (a local file named by a remote reference set).
var ErrNotAllowed = errors.New("kerchunk: reference not allowed")

// MaxReference bounds the bytes one reference may select (a whole-file
// reference included): a chunk is never that large, and a hostile
// reference must not make zarrfs read a whole disk into memory.
const MaxReference = 1 << 30

// MaxGenEntries bounds the references that the generators ("gen") of one
// JSON reference set may expand to.
const MaxGenEntries = 1 << 20

// Opener returns the store whose keys are the paths below root: root is
// "http://host/" or "https://host/" (with user information and port as
// the URL has them) or "s3://bucket/", whose keys are the rest of a URL's
// path without the leading slash, or "file:///abs/folder/", whose keys
// are the names of the files in that folder.
type Opener func(ctx context.Context, root *url.URL) (store.Store, error)

// Options configures OpenJSON and OpenParquet.
type Options struct {
	// Name names the reference set in String and errors ("refs.json").
	Name string
	// Base is the URL of the reference set itself (file:///abs/refs.json,
	// https://host/refs.json, s3://bucket/refs.parq/): relative URLs
	// resolve against it, and whether it is local decides what
	// AllowLocal is about. nil: file:/// and the working directory.
	Base *url.URL
	// Open opens the store of a root URL; nil: every reference to a file
	// fails (inline references still read).
	Open Opener
	// AllowLocal lets a reference set that came over the network (Base
	// is not a file: URL) name local files (file:// URLs, absolute paths,
	// relative paths resolved to file: URLs). A local reference set may
	// always name them.
	AllowLocal bool
}

// ref is one reference: inline bytes, or a range of a target file.
type ref struct {
	inline bool
	data   []byte // inline bytes
	url    string // the target, as written
	off, n int64  // n < 0: the whole file
	err    error  // a reference that cannot be read (its error)
}

// Store is a read-only store over a reference set. It implements
// store.Store, store.Lister and io.Closer and is safe for concurrent use.
type Store struct {
	name string
	opts Options
	base *url.URL

	refs map[string]ref
	keys []string // every key of refs, sorted
	urls []string // the distinct target URLs of a JSON reference set

	// bad holds the key prefixes (folders) of generators that were not
	// expanded, with why: a key under one that is not a reference fails
	// with the error instead of ErrNotExist.
	bad []badPrefix
	// lazy holds the generators too large to expand, whose keys are
	// looked up when asked for.
	lazy []*lazyGen

	pq *parquetRefs // the chunk references of a Parquet reference set

	kind    string // "JSON, version 1", "Parquet": for Summary
	summary string

	mu      sync.Mutex
	targets map[string]*target
	closed  bool
}

type badPrefix struct {
	prefix string
	err    error
}

// target is the store of one root URL, opened at its first use.
type target struct {
	once sync.Once
	st   store.Store
	err  error
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Lister = (*Store)(nil)
	_ io.Closer    = (*Store)(nil)
)

func newStore(opts Options) *Store {
	s := &Store{name: opts.Name, opts: opts, refs: map[string]ref{}, targets: map[string]*target{}}
	s.base = opts.Base
	if s.base == nil {
		s.base = &url.URL{Scheme: "file", Path: "/"}
	}
	if s.name == "" {
		s.name = s.base.String()
	}
	return s
}

// String names the store: "kerchunk NAME".
func (s *Store) String() string { return "kerchunk " + s.name }

// Close closes the stores of the references' targets.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for _, t := range s.targets {
		if c, ok := t.st.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	s.targets = map[string]*target{}
	return errors.Join(errs...)
}

// Remote reports whether any reference points at an http(s):// or s3://
// URL, so that a caller can read the set as it reads a remote store.
func (s *Store) Remote() bool {
	if s.base.Scheme != "file" {
		return true
	}
	for _, lg := range s.lazy {
		if u, ok := lg.firstURL(); ok && isRemoteURL(u) {
			return true
		}
	}
	for _, u := range s.urls {
		if isRemoteURL(u) {
			return true
		}
	}
	return false
}

// internURL returns u, sharing the bytes of an equal URL seen before.
func (s *Store) internURL(u string, index map[string]string) string {
	if v, ok := index[u]; ok {
		return v
	}
	s.urls = append(s.urls, u)
	index[u] = u
	return u
}

// finish sorts the keys once every reference is in, and writes Summary.
func (s *Store) finish() {
	s.keys = make([]string, 0, len(s.refs))
	inline, bad := 0, 0
	for k, r := range s.refs {
		s.keys = append(s.keys, k)
		switch {
		case r.err != nil:
			bad++
		case r.inline:
			inline++
		}
	}
	slices.Sort(s.keys)
	slices.Sort(s.urls)
	var b strings.Builder
	fmt.Fprintf(&b, "Kerchunk reference set (%s): %s\n", s.kind, s.base.Redacted())
	fmt.Fprintf(&b, "  references: %d (%d inline, %d unreadable), to %d files", len(s.refs), inline, bad, len(s.urls))
	for i, u := range s.urls[:min(len(s.urls), 3)] {
		sep := ": "
		if i > 0 {
			sep = ", "
		}
		b.WriteString(sep + u)
	}
	if len(s.urls) > 3 {
		b.WriteString(", …")
	}
	b.WriteString("\n")
	if len(s.lazy) > 0 || len(s.bad) > 0 {
		fmt.Fprintf(&b, "  generators too large to expand: %d looked up key by key, %d refused\n", len(s.lazy), len(s.bad))
	}
	if s.pq != nil {
		fmt.Fprintf(&b, "  chunk references of %d arrays in refs.N.parq files of %d rows, read as needed\n", len(s.pq.arrays), s.pq.recordSize)
	}
	s.summary = b.String()
}

// Summary describes the reference set for people; the root's info.txt
// ends with it.
func (s *Store) Summary() string { return s.summary }

// lookup returns the reference of key.
func (s *Store) lookup(ctx context.Context, key string) (ref, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return ref{}, err
	}
	for _, lg := range s.lazy {
		// A generator's references replace those of "refs" with the same
		// key, as in fsspec.
		if r, ok := lg.lookup(key); ok {
			if r.err != nil {
				return ref{}, fmt.Errorf("%s: %q: %w", s, key, r.err)
			}
			return r, nil
		}
	}
	if r, ok := s.refs[key]; ok {
		if r.err != nil {
			return ref{}, fmt.Errorf("%s: %q: %w", s, key, r.err)
		}
		return r, nil
	}
	if s.pq != nil {
		r, err := s.pq.lookup(ctx, s, key)
		if err != nil {
			return ref{}, fmt.Errorf("%s: %q: %w", s, key, err)
		}
		return r, nil
	}
	for _, b := range s.bad {
		if strings.HasPrefix(key, b.prefix) && !isDocument(key) {
			return ref{}, fmt.Errorf("%s: %q: %w", s, key, b.err)
		}
	}
	return ref{}, fmt.Errorf("%s: %q: %w", s, key, store.ErrNotExist)
}

// Get returns the bytes key refers to.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetRange(ctx, key, store.All)
}

// GetRange returns the part r of the bytes key refers to: for a range of a
// file, only that part is read.
func (s *Store) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	rf, err := s.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	if rf.inline {
		start, end, err := r.Resolve(int64(len(rf.data)))
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", s, key, err)
		}
		return slices.Clone(rf.data[start:end]), nil
	}
	b, err := s.read(ctx, rf, r)
	if err != nil {
		return nil, &refError{store: s.String(), key: key, url: rf.url, err: err}
	}
	return b, nil
}

// refError is the error of reading a reference's target: it matches
// ErrBadReference and the target's error, except store.ErrNotExist (a
// missing target is not a missing chunk).
type refError struct {
	store, key, url string
	err             error
}

func (e *refError) Error() string {
	return fmt.Sprintf("%s: %q: reference to %s: %v", e.store, e.key, e.url, e.err)
}

func (e *refError) Unwrap() []error {
	if errors.Is(e.err, store.ErrNotExist) {
		return []error{ErrBadReference}
	}
	return []error{ErrBadReference, e.err}
}

// read reads the part r of the target range of rf.
func (s *Store) read(ctx context.Context, rf ref, r store.ByteRange) ([]byte, error) {
	st, key, err := s.target(ctx, rf.url)
	if err != nil {
		return nil, err
	}
	if rf.n < 0 {
		// A whole file: read at most MaxReference bytes of it.
		if r.Suffix || (r.Length >= 0 && r.Length <= MaxReference) {
			if r.Length > MaxReference {
				return nil, fmt.Errorf("a suffix of %d bytes is more than a reference may select", r.Length)
			}
			return st.GetRange(ctx, key, r)
		}
		b, err := st.GetRange(ctx, key, store.Range(r.Offset, MaxReference+1))
		if err != nil {
			return nil, err
		}
		if len(b) > MaxReference {
			return nil, fmt.Errorf("the file holds more than the %d bytes a reference may select", MaxReference)
		}
		return b, nil
	}
	start, end, err := r.Resolve(rf.n)
	if err != nil {
		return nil, err
	}
	want := end - start
	if want == 0 {
		return []byte{}, nil // no request for nothing
	}
	b, err := st.GetRange(ctx, key, store.Range(rf.off+start, want))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != want {
		return nil, fmt.Errorf("bytes %d-%d reach past the end of the file (%d bytes read)", rf.off+start, rf.off+end-1, len(b))
	}
	return b, nil
}

// target returns the store and key of the file at the URL u (as written
// in the reference set), checking it against the options.
func (s *Store) target(ctx context.Context, u string) (store.Store, string, error) {
	root, key, err := s.resolve(u)
	if err != nil {
		return nil, "", err
	}
	if s.opts.Open == nil {
		return nil, "", fmt.Errorf("%w: no store for %s", ErrNotAllowed, root)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, "", errors.New("store closed")
	}
	t := s.targets[root.String()]
	if t == nil {
		t = &target{}
		s.targets[root.String()] = t
	}
	s.mu.Unlock()
	t.once.Do(func() { t.st, t.err = s.opts.Open(context.WithoutCancel(ctx), root) })
	if t.err != nil {
		return nil, "", t.err
	}
	return t.st, key, nil
}

// resolve returns the root URL and the store key of the file at the URL u
// (as written in the reference set).
func (s *Store) resolve(raw string) (*url.URL, string, error) {
	var u *url.URL
	switch scheme, _, ok := strings.Cut(raw, "://"); {
	case ok:
		p, err := url.Parse(raw)
		if err != nil {
			return nil, "", fmt.Errorf("URL %q: %w", raw, err)
		}
		switch strings.ToLower(scheme) {
		case "http", "https", "s3", "file":
		default:
			return nil, "", fmt.Errorf("%w: URL scheme %q (zarrfs reads http, https, s3 and file)", ErrNotAllowed, scheme)
		}
		u = p
		u.Scheme = strings.ToLower(u.Scheme)
	case strings.HasPrefix(raw, "/"):
		// An absolute path, as kerchunk writes the path it was given.
		u = &url.URL{Scheme: "file", Path: raw}
	case raw == "":
		return nil, "", errors.New("empty URL")
	default:
		if strings.Contains(raw, "::") {
			return nil, "", fmt.Errorf("%w: chained URL %q", ErrNotAllowed, raw)
		}
		u = s.base.ResolveReference(&url.URL{Path: raw})
	}
	u.Fragment, u.RawFragment = "", ""
	local := u.Scheme == "file"
	if local && s.base.Scheme != "file" && !s.opts.AllowLocal {
		return nil, "", fmt.Errorf("%w: the local file %s, named by a reference set that came from %s (allow with --refs-allow-local)",
			ErrNotAllowed, u.Path, s.base.Redacted())
	}
	root := &url.URL{Scheme: u.Scheme, Path: "/"}
	key := strings.TrimPrefix(path.Clean("/"+u.Path), "/")
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, "", fmt.Errorf("file URL %q names a host", raw)
		}
		if u.RawQuery != "" {
			return nil, "", fmt.Errorf("file URL %q has a query", raw)
		}
		// A local file is the key of the store of its folder, which the
		// operating system finds as it finds any path.
		root.Path = path.Dir("/"+key) + "/"
		root.Path = strings.Replace(root.Path, "//", "/", 1)
		key = path.Base("/" + key)
	default:
		if u.Host == "" {
			return nil, "", fmt.Errorf("URL %q has no host", raw)
		}
		root.Host, root.User, root.RawQuery = u.Host, u.User, u.RawQuery
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, "", fmt.Errorf("URL %q: %w", raw, err)
	}
	return root, key, nil
}

// ListDir lists the folder dir of the reference set's keys.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.CheckListDir(ctx, dir); err != nil {
		return nil, nil, err
	}
	prefix := store.DirPrefix(dir)
	keys, prefixes = []string{}, []string{}
	// Walk the sorted keys under prefix, skipping each sub-folder's keys
	// by a binary search past them.
	i := sort.SearchStrings(s.keys, prefix)
	for i < len(s.keys) && strings.HasPrefix(s.keys[i], prefix) {
		rest := s.keys[i][len(prefix):]
		name, _, isDir := strings.Cut(rest, "/")
		if !isDir {
			keys = append(keys, name)
			i++
			continue
		}
		prefixes = append(prefixes, name)
		next := prefix + name + "0" // '0' follows '/'
		i += sort.SearchStrings(s.keys[i:], next)
	}
	folders := make([]string, 0, len(s.bad)+len(s.lazy))
	for _, b := range s.bad {
		folders = append(folders, b.prefix)
	}
	for _, lg := range s.lazy {
		folders = append(folders, lg.folder)
	}
	for _, f := range folders {
		if rest, ok := strings.CutPrefix(f, prefix); ok && rest != "" {
			name, _, _ := strings.Cut(rest, "/")
			if !slices.Contains(prefixes, name) {
				prefixes = append(prefixes, name)
			}
		}
	}
	slices.Sort(prefixes)
	return keys, prefixes, nil
}

// ListPrefix returns the keys that start with prefix (the chunk keys of a
// Parquet reference set are not listed).
func (s *Store) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	i := sort.SearchStrings(s.keys, prefix)
	j := i
	for j < len(s.keys) && strings.HasPrefix(s.keys[j], prefix) {
		j++
	}
	return slices.Clone(s.keys[i:j]), nil
}

// isDocument reports whether key names a metadata document, which no
// generator makes.
func isDocument(key string) bool {
	switch key[strings.LastIndexByte(key, '/')+1:] {
	case ".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json":
		return true
	}
	return false
}

// isRemoteURL reports whether a reference's URL names a file on the
// network (relative ones are under Base, which Remote looks at first).
func isRemoteURL(u string) bool {
	scheme, _, ok := strings.Cut(u, "://")
	return ok && !strings.EqualFold(scheme, "file")
}
