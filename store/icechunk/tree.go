package icechunk

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// Tree is a whole repository as one read-only store of Zarr v3 keys:
//
//	zarr.json                 a group whose attributes list the branches, the tags and the latest snapshots
//	branches/NAME/…           the snapshot branch NAME points to (as of the last Refresh), as Snapshot keys
//	tags/NAME/…               the snapshot of tag NAME
//	snapshots/ID/…            snapshot ID
//
// with a zarr.json group document at branches/, tags/ and snapshots/.
// A mount of it shows every branch, tag and snapshot as a directory
// holding that snapshot's tree. A reference that cannot be read (a
// branch to a missing snapshot, a corrupt snapshot file) fails the keys
// below it, with an error that is not store.ErrNotExist; its siblings
// read.
type Tree struct {
	repo *Repo

	mu      sync.Mutex
	summary string // Summary, as of the last root document
}

// Tree returns the repository as one store.
func (r *Repo) Tree() *Tree { return &Tree{repo: r} }

// Repo returns the repository.
func (t *Tree) Repo() *Repo { return t.repo }

// String names the repository.
func (t *Tree) String() string { return t.repo.String() }

// Refresh reads the references again: the branches' directories follow
// them (for --live mounts).
func (t *Tree) Refresh(ctx context.Context) error { return t.repo.Refresh(ctx) }

// Close closes the repository.
func (t *Tree) Close() error { return t.repo.Close() }

// kinds are the directories of the top level.
var kinds = []string{"branches", "snapshots", "tags"}

// latest is how many snapshots the root's attributes list.
const latest = 20

// rootWalk bounds the snapshot files of a spec 1 repository the root
// document reads to find the latest.
const rootWalk = 100

// Get returns the value of key.
func (t *Tree) Get(ctx context.Context, key string) ([]byte, error) {
	return t.GetRange(ctx, key, store.All)
}

// GetRange returns the range r of key's value.
func (t *Tree) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	if key == "zarr.json" {
		doc, err := t.rootDoc(ctx)
		if err != nil {
			return nil, err
		}
		return cut(doc, r)
	}
	kind, rest, _ := strings.Cut(key, "/")
	if !slices.Contains(kinds, kind) {
		return nil, fmt.Errorf("%s: %s: %w", t, key, store.ErrNotExist)
	}
	if rest == "zarr.json" {
		return cut([]byte(`{"zarr_format":3,"node_type":"group","attributes":{}}`), r)
	}
	name, sub, ok := strings.Cut(rest, "/")
	if !ok {
		return nil, fmt.Errorf("%s: %s: %w", t, key, store.ErrNotExist)
	}
	s, err := t.snapshot(ctx, kind, name)
	if err != nil {
		return nil, err
	}
	return s.GetRange(ctx, sub, r)
}

// snapshot returns the snapshot of branches/NAME, tags/NAME or
// snapshots/ID.
func (t *Tree) snapshot(ctx context.Context, kind, name string) (*Snapshot, error) {
	info := t.repo.refs()
	var id ID
	var ok bool
	switch kind {
	case "branches":
		id, ok = info.Branches[name]
	case "tags":
		id, ok = info.Tags[name]
	default:
		var err error
		id, err = ParseID(name)
		ok = err == nil && id.String() == name
		if ok && info.Spec != 1 {
			ok = slices.ContainsFunc(info.Snapshots, func(s SnapshotInfo) bool { return s.ID == id })
		}
	}
	if !ok {
		return nil, fmt.Errorf("%s: %s/%s: %w", t, kind, name, store.ErrNotExist)
	}
	return t.repo.Snapshot(ctx, id)
}

// names lists branches/, tags/ or snapshots/.
func (t *Tree) names(ctx context.Context, kind string) ([]string, error) {
	info := t.repo.refs()
	var out []string
	switch kind {
	case "branches":
		for n := range info.Branches {
			out = append(out, n)
		}
	case "tags":
		for n := range info.Tags {
			out = append(out, n)
		}
	default:
		snaps, err := t.repo.Snapshots(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range snaps {
			out = append(out, s.ID.String())
		}
	}
	// A name that is not one path segment cannot be a directory.
	out = slices.DeleteFunc(out, func(n string) bool { return store.ValidateKey(n) != nil || strings.Contains(n, "/") })
	sort.Strings(out)
	return out, nil
}

// rootDoc is the root group's zarr.json: its attributes say what the
// repository holds, which the root's info.txt shows.
func (t *Tree) rootDoc(ctx context.Context) ([]byte, error) {
	info := t.repo.refs()
	// A spec 1 repository's snapshots are found by reading them: the
	// root, read at mount, reads no more than rootWalk of them.
	snaps, err := t.repo.snapshots(ctx, rootWalk)
	if err != nil {
		return nil, err
	}
	count := any(len(snaps))
	if info.Spec == 1 && len(snaps) >= rootWalk {
		count = fmt.Sprintf("%d or more", rootWalk)
	}
	at := map[ID]SnapshotInfo{}
	for _, s := range snaps {
		at[s.ID] = s
	}
	describe := func(id ID) string {
		s, ok := at[id]
		if !ok {
			return id.String()
		}
		return id.String() + "  " + s.FlushedAt.Format(time.DateTime) + " UTC  " + s.Message
	}
	ids := func(m map[string]ID) map[string]string {
		out := map[string]string{}
		for n, id := range m {
			out[n] = id.String()
		}
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Icechunk repository, spec version %d\n", info.Spec)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, set := range []struct {
		title string
		m     map[string]ID
	}{{"branches", info.Branches}, {"tags", info.Tags}} {
		fmt.Fprintf(tw, "%s:\n", set.title)
		names := make([]string, 0, len(set.m))
		for n := range set.m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(tw, "  %s\t%s\n", n, describe(set.m[n]))
		}
	}
	tw.Flush()
	fmt.Fprintf(&b, "latest snapshots (%v in all):\n", count)
	for _, s := range snaps[:min(len(snaps), latest)] {
		fmt.Fprintf(&b, "  %s\n", describe(s.ID))
	}
	t.mu.Lock()
	t.summary = b.String()
	t.mu.Unlock()
	doc := map[string]any{
		"zarr_format": 3, "node_type": "group",
		"attributes": map[string]any{
			"icechunk": map[string]any{
				"spec_version": info.Spec,
				"branches":     ids(info.Branches),
				"tags":         ids(info.Tags),
				"snapshots":    count,
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// Summary describes the repository for people, as of the last read of
// the root document: the branches and tags with their snapshots' ids,
// times and messages, and the latest snapshots. The root's info.txt ends
// with it.
func (t *Tree) Summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.summary
}

// ListDir lists dir: the top level, branches/, tags/ and snapshots/, and
// below them the snapshots' nodes (Snapshot.ListDir).
func (t *Tree) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.ValidateDir(dir); err != nil {
		return nil, nil, err
	}
	if dir == "" {
		return []string{"zarr.json"}, slices.Clone(kinds), nil
	}
	kind, rest, _ := strings.Cut(dir, "/")
	if !slices.Contains(kinds, kind) {
		return nil, nil, nil
	}
	if rest == "" {
		names, err := t.names(ctx, kind)
		return []string{"zarr.json"}, names, err
	}
	name, sub, _ := strings.Cut(rest, "/")
	s, err := t.snapshot(ctx, kind, name)
	if err != nil {
		return nil, nil, err
	}
	return s.ListDir(ctx, sub)
}

// ListPrefix lists the metadata keys that begin with prefix, walking
// the directories below the longest directory in it (every snapshot's
// nodes for the empty prefix).
func (t *Tree) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	dir := prefix[:max(strings.LastIndexByte(prefix, '/'), 0)]
	var out []string
	var walk func(d string) error
	walk = func(d string) error {
		keys, prefixes, err := t.ListDir(ctx, d)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k = join(d, k); strings.HasPrefix(k, prefix) {
				out = append(out, k)
			}
		}
		for _, p := range prefixes {
			if p = join(d, p); strings.HasPrefix(p, prefix) || strings.HasPrefix(prefix, p+"/") {
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// GetRangeInfo is GetRange with the snapshot's Info for keys below a
// reference (Snapshot.GetRangeInfo), no Info for the top level's.
func (t *Tree) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	s, sub, err := t.below(ctx, key)
	if err != nil || s == nil {
		b, err := t.GetRange(ctx, key, r)
		return b, store.Info{}, err
	}
	return s.GetRangeInfo(ctx, sub, r)
}

// GetIfChanged is the snapshot's GetIfChanged for keys below a reference:
// after a branch moved, a chunk its new snapshot references as the old
// one did is store.ErrNotModified.
func (t *Tree) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	s, sub, err := t.below(ctx, key)
	if err != nil || s == nil {
		b, err := t.GetRange(ctx, key, store.All)
		return b, store.Info{}, err
	}
	return s.GetIfChanged(ctx, sub, old)
}

// below returns the snapshot and the key within it of a key below
// branches/NAME/, tags/NAME/ or snapshots/ID/; nil for other keys.
func (t *Tree) below(ctx context.Context, key string) (*Snapshot, string, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, "", err
	}
	kind, rest, _ := strings.Cut(key, "/")
	name, sub, ok := strings.Cut(rest, "/")
	if !ok || !slices.Contains(kinds, kind) {
		return nil, "", nil
	}
	s, err := t.snapshot(ctx, kind, name)
	return s, sub, err
}
