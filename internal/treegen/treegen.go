// Package treegen writes large Zarr v2 hierarchies of metadata only, fast:
// N small arrays in groups, with consolidated metadata (.zmetadata) laid
// out as zarr-python's consolidate_metadata writes it (JSON indented by 4,
// keys sorted). The tests and benchmarks of hierarchies of 100,000 arrays
// and more generate them at run time (issue 42); no chunk is written, so
// every array reads as its fill value.
package treegen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Tree describes a hierarchy: Arrays int32 arrays of 64 elements in
// chunks of 8, GroupSize to a group (g0000/a000, g0000/a001 … 100 when 0).
type Tree struct {
	Arrays    int
	GroupSize int
	// Documents also writes each node's own .zgroup and .zarray, as a
	// store consolidated by zarr-python holds them; without, the store
	// holds only the root's .zgroup and .zmetadata.
	Documents bool
}

// ArrayDoc is every array's .zarray, as zarr-python 2 writes it.
const ArrayDoc = `{
    "chunks": [
        8
    ],
    "compressor": null,
    "dimension_separator": ".",
    "dtype": "<i4",
    "fill_value": 0,
    "filters": null,
    "order": "C",
    "shape": [
        64
    ],
    "zarr_format": 2
}`

// GroupDoc is every group's .zgroup.
const GroupDoc = `{
    "zarr_format": 2
}`

func (t Tree) groupSize() int {
	if t.GroupSize <= 0 {
		return 100
	}
	return t.GroupSize
}

// Groups returns the number of groups below the root.
func (t Tree) Groups() int { return (t.Arrays + t.groupSize() - 1) / t.groupSize() }

// Path returns the path of array i: "g0012/a034".
func (t Tree) Path(i int) string {
	return fmt.Sprintf("g%04d/a%03d", i/t.groupSize(), i%t.groupSize())
}

// GroupPath returns the path of group g: "g0012".
func GroupPath(g int) string { return fmt.Sprintf("g%04d", g) }

// WriteConsolidated writes the .zmetadata of the tree to w.
func (t Tree) WriteConsolidated(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	indented := func(doc string) string {
		// A document nested two levels deep, as json.dumps(indent=4)
		// writes it inside {"metadata": {...}}.
		out := make([]byte, 0, len(doc)+64)
		for i := 0; i < len(doc); i++ {
			out = append(out, doc[i])
			if doc[i] == '\n' {
				out = append(out, "        "...)
			}
		}
		return string(out)
	}
	arr, grp := indented(ArrayDoc), indented(GroupDoc)
	fmt.Fprintf(bw, "{\n    \"metadata\": {\n        \".zgroup\": %s", grp)
	// Keys sorted, as sort_keys writes them: each group, then its arrays
	// ("g0000/.zgroup" < "g0000/a000/.zarray").
	for g := range t.Groups() {
		fmt.Fprintf(bw, ",\n        \"%s/.zgroup\": %s", GroupPath(g), grp)
		for i := g * t.groupSize(); i < min(t.Arrays, (g+1)*t.groupSize()); i++ {
			fmt.Fprintf(bw, ",\n        \"%s/.zarray\": %s", t.Path(i), arr)
		}
	}
	bw.WriteString("\n    },\n    \"zarr_consolidated_format\": 1\n}")
	return bw.Flush()
}

// Write writes the tree into the directory dir (made if missing).
func (t Tree) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".zgroup"), []byte(GroupDoc), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, ".zmetadata"))
	if err != nil {
		return err
	}
	if err := t.WriteConsolidated(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !t.Documents {
		return nil
	}
	for g := range t.Groups() {
		gd := filepath.Join(dir, GroupPath(g))
		if err := os.MkdirAll(gd, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(gd, ".zgroup"), []byte(GroupDoc), 0o644); err != nil {
			return err
		}
	}
	for i := range t.Arrays {
		ad := filepath.Join(dir, t.Path(i))
		if err := os.Mkdir(ad, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(ad, ".zarray"), []byte(ArrayDoc), 0o644); err != nil {
			return err
		}
	}
	return nil
}
