package zarr

import (
	"context"
	"sort"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// loadDraft reads the node at p of a draft hierarchy.
func (h *Hierarchy) loadDraft(ctx context.Context, p string) (*Node, error) {
	l := h.draft
	n := &Node{Path: p, Kind: KindGroup, Format: l.Format()}
	var doc []byte
	for _, kind := range []Kind{KindArray, KindGroup} {
		key := l.MetaKey(p, kind)
		d, mt, _, found, err := h.document(ctx, key, "")
		if err != nil {
			return nil, err
		}
		if found {
			doc, n.Kind = d, kind
			n.Documents = []Document{{Name: kind.String() + ".json", Data: d}}
			h.setModTime(ctx, n, key, mt)
			break
		}
	}
	if p == "" {
		n.Documents = append(n.Documents, Document{Name: v3Doc, Data: l.Entry()})
	}
	if doc == nil {
		if p == "" {
			return n, nil // an implicit root group
		}
		lister, ok := h.st.(store.Lister)
		if !ok {
			return nil, ErrNotExist
		}
		keys, prefixes, err := lister.ListDir(ctx, l.MetaDir(p))
		if err != nil {
			return nil, err
		}
		if len(keys)+len(prefixes) == 0 {
			return nil, ErrNotExist
		}
		return n, nil // an implicit group: a prefix with descendants
	}
	name := n.Documents[0].Name
	var a *meta.Array
	n.Attributes, a, n.Err = l.ParseNode(name, n.Kind, doc, p)
	n.Array, n.Err = newArray(a, n.Err)
	return n, nil
}

// draftChildNames returns the sorted names of the children of the group at
// p: the documents and the prefixes (implicit groups) under its meta/ prefix.
func (h *Hierarchy) draftChildNames(ctx context.Context, p string) ([]string, error) {
	lister, ok := h.st.(store.Lister)
	if !ok {
		return nil, codec.Unsupportedf("listing store %s (v3 draft hierarchies have no consolidated metadata)", h.st)
	}
	l := h.draft
	keys, prefixes, err := lister.ListDir(ctx, l.MetaDir(p))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	add := func(name string) {
		if name != "" && !seen[name] && !strings.HasPrefix(name, "__") {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, k := range keys {
		if name, ok := l.ChildName(k); ok {
			add(name)
		}
	}
	for _, pr := range prefixes {
		add(pr)
	}
	sort.Strings(names)
	return names, nil
}
