package view

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/zarrfs/zarrfs/zarr"
)

// multiscales returns the dataset paths of each OME-Zarr image pyramid a
// group's attributes describe, each relative to the group, largest level
// first as OME-NGFF lists them: the "multiscales" attribute of OME-NGFF
// 0.4 and earlier, or "ome" → "multiscales" of 0.5. Attributes that are
// not such a description give none; paths that could leave the group
// ("..", absolute, empty) are left out.
func multiscales(attrs []byte) [][]string {
	type multiscale struct {
		Datasets []struct {
			Path string `json:"path"`
		} `json:"datasets"`
	}
	var doc struct {
		Multiscales []multiscale `json:"multiscales"`
		OME         struct {
			Multiscales []multiscale `json:"multiscales"`
		} `json:"ome"`
	}
	if json.Unmarshal(attrs, &doc) != nil {
		// One malformed member spoils the whole document for
		// encoding/json; try the two places on their own.
		var raw map[string]json.RawMessage
		if json.Unmarshal(attrs, &raw) != nil {
			return nil
		}
		doc.Multiscales = nil
		doc.OME.Multiscales = nil
		json.Unmarshal(raw["multiscales"], &doc.Multiscales)
		json.Unmarshal(raw["ome"], &doc.OME)
	}
	var out [][]string
	for _, m := range append(doc.Multiscales, doc.OME.Multiscales...) {
		var paths []string
		for _, d := range m.Datasets {
			if p, ok := relPath(d.Path); ok {
				paths = append(paths, p)
			}
		}
		if len(paths) > 0 {
			out = append(out, paths)
		}
	}
	return out
}

// relPath cleans a dataset path relative to its group ("0", "./s1",
// "a/b/") as zarr.CleanPath does, refusing one that is empty or absolute
// besides.
func relPath(p string) (string, bool) {
	if strings.HasPrefix(p, "/") {
		return "", false
	}
	q, err := zarr.CleanPath(p)
	return q, err == nil && q != ""
}

// joinPath joins a node path and a path relative to it.
func joinPath(dir, rel string) string {
	if dir == "" {
		return rel
	}
	return dir + "/" + rel
}

// pyramidOf returns the paths of the levels of the OME-Zarr image pyramid
// the array n is a level of (n's own path among them), or nil: an
// ancestor group's multiscales names n as one of its datasets. It loads
// the ancestors, which a mount has loaded already to reach n.
func pyramidOf(ctx context.Context, h *zarr.Hierarchy, n *zarr.Node) []string {
	for dir := n.Path; dir != ""; {
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			dir = ""
		} else {
			dir = dir[:i]
		}
		g, err := h.Node(ctx, dir)
		if err != nil || g.Kind != zarr.KindGroup {
			continue
		}
		for _, paths := range multiscales(g.Attributes) {
			levels := make([]string, len(paths))
			found := false
			for k, p := range paths {
				levels[k] = joinPath(dir, p)
				found = found || levels[k] == n.Path
			}
			if found {
				return levels
			}
		}
	}
	return nil
}
