package zarr

import (
	"context"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// This file loads the nodes of a v3 hierarchy (zarr.json).

func (h *Hierarchy) loadV3(ctx context.Context, p string) (*Node, error) {
	key := store.Join(p, v3Doc)
	doc, mt, fromCons, found, err := h.document(ctx, key, "  ")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNotExist
	}
	d := h.newDocument(v3Doc, key, doc, fromCons)
	if p == "" {
		d = h.rootDocument(v3Doc, key, doc)
	}
	n := &Node{Path: p, Kind: KindUnknown, Format: FormatV3, Documents: []Document{d}}
	if !fromCons {
		h.setModTime(ctx, n, key, mt)
	}
	if p == "" && len(doc) > MaxDocumentSize {
		// A root whose consolidated metadata makes its document large
		// (within Options.ConsolidatedLimit): its own members are
		// parsed, the consolidated ones were read by Open.
		if doc, err = meta.WithoutMember(v3Doc, doc, "consolidated_metadata"); err != nil {
			n.Err = err
			return n, nil
		}
	}
	v, err := meta.ParseV3Node(doc)
	if v.Kind != 0 {
		n.Kind, n.Attributes = v.Kind, v.Attributes
	}
	if err != nil {
		n.Err = err
		return n, nil
	}
	if n.Kind == KindArray {
		n.Array, n.Err = newArray(meta.ParseV3Array(v))
	}
	return n, nil
}
