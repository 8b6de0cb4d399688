package zarr

import (
	"context"
	"encoding/json"
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
	var doc, groupDoc []byte
	for _, kind := range []Kind{KindArray, KindGroup} {
		key := l.MetaKey(p, kind)
		d, mt, _, found, err := h.document(ctx, key, "")
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		n.Documents = append(n.Documents, Document{Name: kind.String() + ".json", Data: d})
		if doc != nil {
			// GDAL's test.zr3 has both root.array.json and
			// root.group.json: the root is then a group (its children
			// show in the mount and in tree, as zarr-python and GDAL
			// list them) that also carries the array (its data, as
			// `zarrfs cat STORE /` prints it).
			groupDoc, n.Kind = d, KindGroup
			break
		}
		doc, n.Kind = d, kind
		h.setModTime(ctx, n, key, mt)
		if p != "" || kind == KindGroup {
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
	if groupDoc != nil {
		var attrs json.RawMessage
		attrs, a, n.Err = l.ParseNode(name, KindArray, doc, p)
		n.Array, n.Err = newArray(a, n.Err)
		n.Note = "the root is an array (array.json) and a group (group.json) at once, as GDAL's test.zr3 is: both are shown"
		var gerr error
		if n.Attributes, _, gerr = l.ParseNode(KindGroup.String()+".json", KindGroup, groupDoc, p); n.Err == nil {
			n.Err = gerr
		}
		if string(n.Attributes) == "{}" || n.Attributes == nil {
			n.Attributes = attrs
		}
		return n, nil
	}
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
