package icechunk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// Options configures Open.
type Options struct {
	// OpenURL opens the store at base, which is "s3://BUCKET",
	// "http(s)://HOST/" or "file:///DIR", for virtual chunk references,
	// with the settings of the virtual chunk container c that matched
	// the reference (nil: the repository lists no containers; see
	// containers.go); nil: virtual chunks fail to read.
	OpenURL func(ctx context.Context, base string, c *Container) (store.Store, error)
	// AllowFile lets virtual references name file:// URLs (a repository
	// on a local disk); without it they are refused, as a repository
	// served over HTTP must not read the reader's files.
	AllowFile bool
	// ManifestCache bounds the bytes of parsed manifests kept (0: 64 MiB).
	ManifestCache int
	// SnapshotCache bounds the bytes of parsed snapshots kept (0: 64
	// MiB). See cache.go for why these bounds are fixed.
	SnapshotCache int
}

// defaultCache is the default bound of each of the two caches.
const defaultCache = 64 << 20

// maxAncestry bounds the ancestry walked in a spec 1 repository to find
// its snapshots, which also breaks a cycle of parent ids.
const maxAncestry = 1000

// Repo is an open Icechunk repository.
type Repo struct {
	st   store.Store
	opts Options

	mu    sync.Mutex
	state *state // the references and configuration as last read (Refresh)

	snaps   *onceCache[*Snapshot]
	mans    *onceCache[*ManifestFile]
	virtual map[string]store.Store
}

// ErrNotRepo matches the error of Open for a store that holds no
// Icechunk repository.
var ErrNotRepo = errors.New("icechunk: not a repository")

// Open opens the repository in st and reads its references and
// configuration (Refresh). A store that holds no repository gives an
// error matching ErrNotRepo.
func Open(ctx context.Context, st store.Store, opts Options) (*Repo, error) {
	if opts.ManifestCache <= 0 {
		opts.ManifestCache = defaultCache
	}
	if opts.SnapshotCache <= 0 {
		opts.SnapshotCache = defaultCache
	}
	r := &Repo{st: st, opts: opts, snaps: newOnceCache[*Snapshot](opts.SnapshotCache),
		mans: newOnceCache[*ManifestFile](opts.ManifestCache), virtual: map[string]store.Store{}}
	if err := r.Refresh(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Containers returns the repository's virtual chunk containers, longest
// prefix first, as last read.
func (r *Repo) Containers() []Container { return slices.Clone(r.current().containers) }

// String names the repository's store.
func (r *Repo) String() string { return "icechunk " + r.st.String() }

// Spec is the repository's spec version (1 or 2).
func (r *Repo) Spec() int { return r.refs().Spec }

func (r *Repo) refs() *RepoInfo { return r.current().info }

func (r *Repo) current() *state {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Branches returns the branches and the snapshots they point to.
func (r *Repo) Branches() map[string]ID { return maps(r.refs().Branches) }

// Tags returns the tags (not deleted) and their snapshots.
func (r *Repo) Tags() map[string]ID { return maps(r.refs().Tags) }

func maps(m map[string]ID) map[string]ID {
	out := make(map[string]ID, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ErrNoRef matches the error for a branch, tag or snapshot id that the
// repository does not have.
var ErrNoRef = errors.New("icechunk: no such branch, tag or snapshot")

// Resolve returns the snapshot a branch, tag or snapshot id names
// (branches first, then tags, then ids).
func (r *Repo) Resolve(ctx context.Context, ref string) (ID, error) {
	info := r.refs()
	if id, ok := info.Branches[ref]; ok {
		return id, nil
	}
	if id, ok := info.Tags[ref]; ok {
		return id, nil
	}
	if id, err := ParseID(ref); err == nil {
		return id, nil
	}
	return ID{}, fmt.Errorf("%s: %q: %w", r, ref, ErrNoRef)
}

// Ref opens the snapshot a branch, tag or snapshot id names.
func (r *Repo) Ref(ctx context.Context, ref string) (*Snapshot, error) {
	id, err := r.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	return r.Snapshot(ctx, id)
}

// Snapshot opens snapshot id, reading its file once.
func (r *Repo) Snapshot(ctx context.Context, id ID) (*Snapshot, error) {
	s, err := r.snapshot(ctx, id)
	if cancelled(err) && ctx.Err() == nil {
		// Another caller's read was cancelled: read it again.
		s, err = r.snapshot(ctx, id)
	}
	return s, err
}

// cancelled reports whether err is a cancellation or a deadline.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (r *Repo) snapshot(ctx context.Context, id ID) (*Snapshot, error) {
	return r.snaps.get(id, func() (*Snapshot, int, error) {
		f, err := r.readSnapshot(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		return newSnapshot(r, f), f.size, nil
	})
}

func (r *Repo) readSnapshot(ctx context.Context, id ID) (*SnapshotFile, error) {
	key := "snapshots/" + id.String()
	data, err := r.st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %s: %w", r, id, dangling(err))
	}
	f, err := ParseSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r, key, err)
	}
	if f.ID != id {
		return nil, fmt.Errorf("%s: %s: %w", r, key, corruptf("holds snapshot %s", f.ID))
	}
	return f, nil
}

// Snapshots lists the repository's snapshots, latest first: a spec 2
// repository's from its repo info; a spec 1 repository's by walking the
// ancestry of its branches and tags (at most maxAncestry snapshots, each
// read once; a cycle of parents ends the walk).
func (r *Repo) Snapshots(ctx context.Context) ([]SnapshotInfo, error) {
	return r.snapshots(ctx, maxAncestry)
}

// snapshots is Snapshots, walking at most limit snapshots of a spec 1
// repository.
func (r *Repo) snapshots(ctx context.Context, limit int) ([]SnapshotInfo, error) {
	info := r.refs()
	var out []SnapshotInfo
	if info.Spec != 1 {
		out = slices.Clone(info.Snapshots)
	} else {
		seen := map[ID]bool{}
		var heads []ID
		for _, m := range []map[string]ID{info.Branches, info.Tags} {
			for _, id := range m {
				heads = append(heads, id)
			}
		}
		for len(heads) > 0 && len(seen) < limit {
			id := heads[len(heads)-1]
			heads = heads[:len(heads)-1]
			if seen[id] {
				continue
			}
			seen[id] = true
			s, err := r.Snapshot(ctx, id)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				out = append(out, SnapshotInfo{ID: id, Parent: -1, Message: "(unreadable: " + err.Error() + ")"})
				continue
			}
			out = append(out, SnapshotInfo{ID: id, Parent: -1, FlushedAt: s.file.FlushedAt, Message: s.file.Message})
			if s.file.Parent != nil {
				heads = append(heads, *s.file.Parent)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].FlushedAt.Equal(out[j].FlushedAt) {
			return out[i].FlushedAt.After(out[j].FlushedAt)
		}
		return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0
	})
	return out, nil
}

// manifest returns manifest id, parsed once and kept in a cache bounded
// in bytes.
func (r *Repo) manifest(ctx context.Context, id ID) (*ManifestFile, error) {
	m, err := r.manifestOnce(ctx, id)
	if cancelled(err) && ctx.Err() == nil {
		m, err = r.manifestOnce(ctx, id)
	}
	return m, err
}

func (r *Repo) manifestOnce(ctx context.Context, id ID) (*ManifestFile, error) {
	return r.mans.get(id, func() (*ManifestFile, int, error) {
		key := "manifests/" + id.String()
		data, err := r.st.Get(ctx, key)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: manifest %s: %w", r, id, dangling(err))
		}
		m, err := ParseManifest(data)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %s: %w", r, key, err)
		}
		if m.ID != id {
			return nil, 0, fmt.Errorf("%s: %s: %w", r, key, corruptf("holds manifest %s", m.ID))
		}
		return m, m.size, nil
	})
}

// ErrChanged matches the error of reading a virtual chunk whose object no
// longer has the ETag, or was modified after the time, its reference
// recorded.
var ErrChanged = errors.New("icechunk: virtual chunk's object changed since it was referenced")

// readRef returns the bytes of chunk reference c.
func (r *Repo) readRef(ctx context.Context, c *ChunkRef, br store.ByteRange) ([]byte, error) {
	switch {
	case c.Inline != nil:
		start, end, err := br.Resolve(int64(len(c.Inline)))
		if err != nil {
			return nil, err
		}
		return bytes.Clone(c.Inline[start:end]), nil
	case c.Native:
		rg, err := subRange(c.Offset, c.Length, br)
		if err != nil {
			return nil, err
		}
		return r.st.GetRange(ctx, "chunks/"+c.ChunkID.String(), rg)
	case c.Location != "":
		return r.readVirtual(ctx, c, br)
	}
	return nil, corruptf("chunk reference %v: neither inline, native nor virtual", c.Index)
}

// subRange is the range br of the length bytes at off in an object.
func subRange(off, length uint64, br store.ByteRange) (store.ByteRange, error) {
	if off > 1<<62 || length > 1<<62 {
		return store.ByteRange{}, corruptf("chunk offset %d, length %d", off, length)
	}
	start, end, err := br.Resolve(int64(length))
	if err != nil {
		return store.ByteRange{}, err
	}
	return store.Range(int64(off)+start, end-start), nil
}

// readVirtual reads a virtual reference, checking its condition where the
// store tells the object's ETag or modification time.
func (r *Repo) readVirtual(ctx context.Context, c *ChunkRef, br store.ByteRange) ([]byte, error) {
	st, key, err := r.virtualStore(ctx, c.Location)
	if err != nil {
		return nil, fmt.Errorf("virtual chunk %v at %s: %w", c.Index, c.Location, err)
	}
	rg, err := subRange(c.Offset, c.Length, br)
	if err != nil {
		return nil, err
	}
	if c.ETag == "" && c.LastModified.IsZero() {
		return st.GetRange(ctx, key, rg)
	}
	var b []byte
	var info store.Info
	if ig, ok := st.(store.InfoGetter); ok {
		b, info, err = ig.GetRangeInfo(ctx, key, rg)
	} else {
		if s, ok := st.(store.Stater); ok {
			if info, err = s.Stat(ctx, key); err != nil {
				return nil, fmt.Errorf("virtual chunk %v at %s: %w", c.Index, c.Location, err)
			}
		}
		b, err = st.GetRange(ctx, key, rg)
	}
	if err != nil {
		return nil, fmt.Errorf("virtual chunk %v at %s: %w", c.Index, c.Location, err)
	}
	unquote := func(s string) string { return strings.TrimPrefix(strings.Trim(s, `"`), "W/") }
	switch {
	case c.ETag != "" && info.ETag != "" && unquote(c.ETag) != unquote(info.ETag):
		return nil, fmt.Errorf("virtual chunk %v at %s: %w (ETag %s, recorded %s)", c.Index, c.Location, ErrChanged, info.ETag, c.ETag)
	case !c.LastModified.IsZero() && !info.ModTime.IsZero() && info.ModTime.Truncate(time.Second).After(c.LastModified):
		return nil, fmt.Errorf("virtual chunk %v at %s: %w (modified %s, recorded %s)", c.Index, c.Location, ErrChanged,
			info.ModTime.UTC().Format(time.RFC3339), c.LastModified.Format(time.RFC3339))
	}
	return b, nil
}

// ErrRefused matches the error for a virtual reference to a URL this
// repository may not read.
var ErrRefused = errors.New("icechunk: virtual chunk URL refused")

// virtualStore returns the store and key of a virtual chunk's URL.
func (r *Repo) virtualStore(ctx context.Context, loc string) (store.Store, string, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrRefused, err)
	}
	var base, key string
	switch strings.ToLower(u.Scheme) {
	case "s3":
		base, key = "s3://"+u.Host, strings.TrimPrefix(u.Path, "/")
	case "http", "https":
		base, key = strings.ToLower(u.Scheme)+"://"+u.Host+"/", strings.TrimPrefix(u.Path, "/")
	case "file":
		if !r.opts.AllowFile {
			return nil, "", fmt.Errorf("%w: file:// references are read only from a repository on a local disk", ErrRefused)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, "", fmt.Errorf("%w: file URL with host %q", ErrRefused, u.Host)
		}
		d, f := path.Split(path.Clean(u.Path))
		base, key = "file://"+d, f
	default:
		return nil, "", fmt.Errorf("%w: scheme %q (s3, http, https, file are read)", ErrRefused, u.Scheme)
	}
	if u.Host == "" && u.Scheme != "file" {
		return nil, "", fmt.Errorf("%w: no host", ErrRefused)
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrRefused, err)
	}
	cur := r.current()
	if cur.containersErr != nil {
		return nil, "", cur.containersErr
	}
	c, err := container(cur.containers, strings.ToLower(u.Scheme), loc)
	if err != nil {
		return nil, "", err
	}
	if r.opts.OpenURL == nil {
		return nil, "", fmt.Errorf("%w: no way to open %s here", ErrRefused, base)
	}
	// The stores of virtual chunks, by base and the container's
	// settings: a container changed under --live opens a new store.
	vkey := base
	if c != nil {
		vkey += fmt.Sprintf("\x00%#v", *c)
	}
	r.mu.Lock()
	st := r.virtual[vkey]
	r.mu.Unlock()
	if st != nil {
		return st, key, nil
	}
	st, err = r.opts.OpenURL(ctx, base, c)
	if err != nil {
		return nil, "", err
	}
	r.mu.Lock()
	if old := r.virtual[vkey]; old != nil {
		r.mu.Unlock()
		closeStore(st)
		return old, key, nil
	}
	r.virtual[vkey] = st
	r.mu.Unlock()
	return st, key, nil
}

func closeStore(st store.Store) {
	if c, ok := st.(store.Closer); ok {
		c.Close()
	}
}

// Close closes the repository's store and the stores of virtual chunks.
func (r *Repo) Close() error {
	r.mu.Lock()
	v := r.virtual
	r.virtual = map[string]store.Store{}
	r.mu.Unlock()
	for _, st := range v {
		closeStore(st)
	}
	if c, ok := r.st.(store.Closer); ok {
		return c.Close()
	}
	return nil
}

// parentOf returns the message of snapshot id and its parent (nil for the
// first): a spec 2 repository's from the repo info, a spec 1
// repository's from the snapshot file.
func (r *Repo) parentOf(ctx context.Context, id ID) (string, *ID, error) {
	info := r.refs()
	if info.Spec != 1 {
		for _, s := range info.Snapshots {
			if s.ID == id {
				if s.Parent < 0 {
					return s.Message, nil, nil
				}
				p := info.Snapshots[s.Parent].ID
				return s.Message, &p, nil
			}
		}
		return "", nil, fmt.Errorf("%s: snapshot %s: %w", r, id, ErrNoRef)
	}
	s, err := r.Snapshot(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return s.file.Message, s.file.Parent, nil
}

// dangling turns the absence of a file the repository names (a snapshot,
// a manifest) into an error matching ErrCorrupt and not
// store.ErrNotExist: to the engine "not found" means an absent node or a
// chunk of fill value, which a dangling reference is not.
func dangling(err error) error {
	if errors.Is(err, store.ErrNotExist) {
		return corruptf("missing (%v)", err)
	}
	return err
}
