package zarr

import (
	"context"
	"fmt"

	"github.com/zarrfs/zarrfs/zarr/meta"
)

// loadV1 reads the node at p of a v1 store: the array at the root. A v1
// store has no other nodes.
func (h *Hierarchy) loadV1(ctx context.Context, p string) (*Node, error) {
	if p != "" {
		return nil, ErrNotExist
	}
	doc, mt, _, found, err := h.document(ctx, v1MetaDoc, "")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNotExist
	}
	n := &Node{Kind: KindArray, Format: FormatV1, Documents: []Document{{Name: v1MetaDoc, Data: doc}}}
	h.setModTime(ctx, n, v1MetaDoc, mt)
	attrs, _, _, hasAttrs, err := h.document(ctx, v1AttrsDoc, "")
	if err != nil {
		n.Err = fmt.Errorf("%s: %w", v1AttrsDoc, err)
		return n, nil
	}
	if hasAttrs {
		n.Documents = append(n.Documents, Document{Name: v1AttrsDoc, Data: attrs})
		if n.Attributes, err = meta.ParseAttributes(v1AttrsDoc, attrs); err != nil {
			n.Err = err
			return n, nil
		}
	}
	n.Array, n.Err = newArray(meta.ParseV1Array(doc))
	return n, nil
}
