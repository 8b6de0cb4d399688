package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
	"golang.org/x/sync/errgroup"
)

// This file lists a group's children: from consolidated metadata, the
// layout of a draft hierarchy, or by listing the store one level down.

// Children returns the child groups and arrays of the node at path, sorted
// by name: from consolidated metadata when the hierarchy has it, otherwise
// by listing the store one level down. Children whose metadata is broken
// are included with Node.Err set. An array has no children; a group whose
// own metadata is broken, or a node too broken to tell its kind, has the
// children found below it: a broken node hides nothing.
func (h *Hierarchy) Children(ctx context.Context, path string) ([]*Node, error) {
	parent, err := h.Node(ctx, path)
	if err != nil {
		return nil, err
	}
	if parent.Kind == KindArray {
		return nil, nil
	}
	out, err := h.children(ctx, parent.Path)
	if err != nil || !h.remote {
		return out, err
	}
	// A reader walking the tree lists the child groups next: load their
	// children now, in the background, a level ahead (each group once).
	h.mu.Lock()
	var ahead []string
	for _, n := range out {
		if n.Kind == KindGroup && !h.ahead[n.Path] {
			if h.ahead == nil {
				h.ahead = map[string]bool{}
			}
			h.ahead[n.Path] = true
			ahead = append(ahead, n.Path)
		}
	}
	h.mu.Unlock()
	for _, p := range ahead {
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readAheadTimeout)
			defer cancel()
			h.children(ctx, p) // errors show again when the group is listed
		}()
	}
	return out, nil
}

// children returns the child nodes of the group at path p, sorted by name.
func (h *Hierarchy) children(ctx context.Context, p string) ([]*Node, error) {
	names, err := h.childNames(ctx, p)
	if err != nil {
		return nil, store.Errorf(h.st, err, "node %q: listing children", "/"+p)
	}
	nodes := make([]*Node, len(names))
	// A few workers load them all (as many as the store may have requests
	// in flight, for a remote one): each grows its stack once, where a
	// goroutine per child grew one for every node it loaded.
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range min(len(names), h.workers) {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(names) {
					return nil
				}
				cp := store.Join(p, names[i])
				n, err := h.Node(gctx, cp)
				switch {
				case errors.Is(err, ErrNotExist):
					// A prefix holding chunks or other data, not a node.
				case err != nil && gctx.Err() != nil:
					return gctx.Err()
				case err != nil:
					nodes[i] = &Node{Path: cp, Kind: KindUnknown, Format: h.format, Attributes: json.RawMessage("{}"), Err: err}
				default:
					nodes[i] = n
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := nodes[:0]
	for _, n := range nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// ChildNames returns the sorted candidate child names of the group at p
// (childNames): the names of the nodes Children would load, without
// loading them; some may not be nodes.
func (h *Hierarchy) ChildNames(ctx context.Context, p string) ([]string, error) {
	return h.childNames(ctx, p)
}

// childNames returns the sorted candidate child names of the group at p,
// listed once (the store does not change under a hierarchy): a caller
// asking while another lists waits for that listing (a reader listing a
// group its parent's listing is loading ahead). Consolidated metadata
// finds short listings in its index each time (a few binary searches a
// child, the names substrings of its keys): kept, the listings of a
// large hierarchy's groups of arrays would cost some 30 bytes an array
// (BENCH.md, Hierarchies of many arrays). Long ones (the root of a tree
// of groups, listed again for each group walkNext looks past) are kept.
func (h *Hierarchy) childNames(ctx context.Context, p string) ([]string, error) {
	if h.consolidated != nil && h.draft == nil {
		h.mu.Lock()
		names, ok := h.names[p]
		h.mu.Unlock()
		if ok {
			return names, nil
		}
		names, err := h.listChildNames(ctx, p)
		if err == nil && len(names) > keepNames {
			h.mu.Lock()
			if h.names == nil {
				h.names = map[string][]string{}
			}
			h.names[p] = names
			h.mu.Unlock()
		}
		return names, err
	}
	for {
		h.mu.Lock()
		names, ok := h.names[p]
		wait, busy := h.naming[p]
		if !ok && !busy {
			if h.naming == nil {
				h.naming = map[string]chan struct{}{}
			}
			h.naming[p] = make(chan struct{})
		}
		h.mu.Unlock()
		if ok {
			return names, nil
		}
		if !busy {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wait: // listed, or failed: look again, and list if it failed
		}
	}
	names, err := h.listChildNames(ctx, p)
	h.mu.Lock()
	if err == nil {
		if h.names == nil {
			h.names = map[string][]string{}
		}
		h.names[p] = names
	}
	close(h.naming[p])
	delete(h.naming, p)
	h.mu.Unlock()
	return names, err
}

// keepNames is the most child names of a group that consolidated
// metadata finds again each time they are asked for (childNames).
const keepNames = 256

// listChildNames lists the sorted candidate child names of the group at p.
func (h *Hierarchy) listChildNames(ctx context.Context, p string) ([]string, error) {
	if h.draft != nil {
		return h.draftChildNames(ctx, p)
	}
	var names []string
	if h.consolidated != nil {
		names = h.consolidated.ChildNames(p)
	} else {
		l, ok := h.st.(store.Lister)
		if !ok {
			return nil, notListable{codec.Unsupportedf("listing: %s cannot list its keys and the hierarchy has no consolidated metadata; "+
				"open a node by its path (zarrfs ls/info/cat STORE PATH) or consolidate the metadata", h.st)}
		}
		var wg sync.WaitGroup
		if h.remote {
			wg.Go(func() { h.listPage(ctx, p) }) // at the same time: no round trip added
		}
		_, prefixes, err := l.ListDir(ctx, p)
		wg.Wait()
		if err != nil {
			return nil, err
		}
		names = prefixes
	}
	out := names[:0]
	for _, n := range names {
		if !strings.HasPrefix(n, "__") {
			out = append(out, n)
		}
	}
	return out, nil
}

// ErrNotListable matches the error of Children for a group whose children
// cannot be found: the store cannot list its keys (an HTTP server) and
// the hierarchy has no consolidated metadata. The group's children can
// still be opened by path with Node. The error also matches
// ErrUnsupported.
var ErrNotListable = errors.New("zarr: children cannot be listed")

// notListable is a listing error matching ErrNotListable.
type notListable struct{ error }

func (e notListable) Is(target error) bool { return target == ErrNotListable }

func (e notListable) Unwrap() error { return e.error }
