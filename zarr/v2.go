package zarr

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// This file loads the nodes of a v2 hierarchy (.zarray, .zgroup, .zattrs).

func (h *Hierarchy) loadV2(ctx context.Context, p string) (*Node, error) {
	n := &Node{Path: p, Format: FormatV2}
	arrayKey, attrsKey := store.Join(p, v2ArrayDoc), store.Join(p, v2AttrsDoc)
	// Arrays outnumber groups: a group's .zgroup is asked for once its
	// .zarray is found missing.
	docs := h.documents(ctx, "    ", arrayKey, attrsKey)
	doc, mt, fromCons, found, err := docs.get(arrayKey)
	if errors.Is(err, ErrInvalidMetadata) {
		// A .zarray too large to read: an array, broken.
		n.Kind, n.Err = KindArray, err
		return n, nil
	}
	if err != nil {
		return nil, err
	}
	name, key := v2ArrayDoc, arrayKey
	n.Kind = KindArray
	if !found {
		groupKey := store.Join(p, v2GroupDoc)
		if doc, mt, fromCons, found, err = docs.get(groupKey); err != nil {
			return nil, err
		}
		if !found {
			if p == "" && h.consolidated != nil {
				// A root with .zmetadata but no .zgroup: an implicit root group.
				n.Kind = KindGroup
				n.Documents = []Document{h.rootDocument(v2Consolidated, v2Consolidated, h.prefetched[v2Consolidated])}
				return n, nil
			}
			return nil, ErrNotExist
		}
		name, key, n.Kind = v2GroupDoc, groupKey, KindGroup
	}
	n.Documents = make([]Document, 1, 3) // with .zattrs, and the root's .zmetadata
	n.Documents[0] = h.newDocument(name, key, doc, fromCons)
	if !fromCons {
		h.setModTime(ctx, n, key, mt)
	}
	attrs, _, attrsFromCons, hasAttrs, err := docs.get(attrsKey)
	if err != nil {
		n.Err = fmt.Errorf("%s: %w", v2AttrsDoc, err)
	} else if hasAttrs {
		n.Documents = append(n.Documents, h.newDocument(v2AttrsDoc, attrsKey, attrs, attrsFromCons))
		if n.Attributes, err = meta.ParseAttributes(v2AttrsDoc, attrs); err != nil {
			n.Err = err
		}
	}
	if zm, ok := h.prefetched[v2Consolidated]; ok && p == "" {
		n.Documents = append(n.Documents, h.rootDocument(v2Consolidated, v2Consolidated, zm))
	}
	n.Documents = slices.Clip(n.Documents) // an append elsewhere copies
	if n.Err != nil {
		return n, nil
	}
	if n.Kind == KindGroup {
		n.Err = meta.ParseV2Group(doc)
	} else {
		n.Array, n.Err = newArray(meta.ParseV2Array(doc, n.Attributes))
	}
	return n, nil
}
