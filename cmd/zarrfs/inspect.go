package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/zarrfs/zarrfs/internal/hugemem"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

var lsCommand = command{
	name: "ls", args: "STORE [PATH]", nargs: [2]int{1, 2},
	short:   "children of a node: kind, shape, dtype, codecs",
	summary: "List the children of a group (or describe one array): kind, name, shape, data type, codecs.",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		sf := storeFlagsFor(fl)
		return func(ctx context.Context, e *env, args []string) error {
			path := ""
			if len(args) > 1 {
				path = args[1]
			}
			o, n, err := openNode(ctx, args[0], sf, path)
			if err != nil {
				return err
			}
			defer o.close()
			nodes := []*zarr.Node{n}
			if n.Kind != zarr.KindArray {
				// A group's children, also when its own metadata is
				// broken (as the mount lists them); a node too broken to
				// tell its kind shows itself unless it has children.
				children, err := o.h.Children(ctx, n.Path)
				if err != nil {
					return o.errorf(path, err)
				}
				if n.Kind == zarr.KindGroup || len(children) > 0 {
					nodes = children
				}
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			for _, c := range nodes {
				cols := describe(c)
				for len(cols) > 2 && cols[len(cols)-1] == "" {
					cols = cols[:len(cols)-1]
				}
				fmt.Fprintln(tw, strings.Join(cols, "\t"))
			}
			return tw.Flush()
		}
	},
}

// describe returns the columns ls and tree print for a node: kind, name
// (groups with a trailing slash), shape, data type, codecs, and the error
// that makes it unusable.
func describe(n *zarr.Node) []string {
	name := n.Name()
	if name == "" {
		name = "/"
	}
	cols := []string{n.Kind.String(), name, "", "", ""}
	if n.Kind != zarr.KindArray && name != "/" {
		cols[1] += "/"
	}
	if a := n.Array; a != nil {
		cols[2], cols[3], cols[4] = meta.PyTuple(a.Shape()), a.DataType().Name, codecNames(a.Codecs())
		if a.Err != nil && n.Err == nil {
			cols = append(cols, "error: "+oneLine(a.Err.Error()))
		}
	}
	if n.Err != nil {
		cols = append(cols, "error: "+oneLine(n.Err.Error()))
	}
	return cols
}

// codecNames lists the names in a codec chain ("bytes,zstd").
func codecNames(raw json.RawMessage) string {
	var chain []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &chain); err != nil {
		return string(raw)
	}
	names := make([]string, len(chain))
	for i, c := range chain {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

var treeCommand = command{
	name: "tree", args: "STORE", nargs: [2]int{1, 1},
	short:   "the whole hierarchy",
	summary: "Print the whole hierarchy.",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		sf := storeFlagsFor(fl)
		return func(ctx context.Context, e *env, args []string) error {
			o, root, err := openNode(ctx, args[0], sf, "")
			if err != nil {
				return err
			}
			defer o.close()
			w := bufio.NewWriter(e.stdout)
			fmt.Fprintln(w, treeLine(root))
			if err := o.tree(ctx, w, root, ""); err != nil {
				return err
			}
			return w.Flush()
		}
	},
}

// treeLine is one line of tree: the name, then the other columns of
// describe.
func treeLine(n *zarr.Node) string {
	cols := describe(n)
	line := cols[1] + "  " + cols[0]
	for _, c := range cols[2:] {
		if c != "" {
			line += "  " + c
		}
	}
	return line
}

// tree prints the descendants of the group n, each line prefixed.
func (o *opened) tree(ctx context.Context, w io.Writer, n *zarr.Node, prefix string) error {
	if n.Kind == zarr.KindArray {
		return nil
	}
	children, err := o.h.Children(ctx, n.Path)
	if err != nil {
		return o.errorf(n.Path, err)
	}
	for i, c := range children {
		branch, indent := "├── ", "│   "
		if i == len(children)-1 {
			branch, indent = "└── ", "    "
		}
		fmt.Fprintln(w, prefix+branch+treeLine(c))
		if err := o.tree(ctx, w, c, prefix+indent); err != nil {
			return err
		}
	}
	return nil
}

var infoCommand = command{
	name: "info", args: "[--json] STORE PATH", nargs: [2]int{2, 2},
	short:   "one node: format, shape, chunks, dtype, codecs, fill value",
	summary: "Describe one node: format, shape, chunks, data type, codecs, fill value, attributes.",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		asJSON := fl.Bool("json", false, "print JSON instead of text")
		sf := storeFlagsFor(fl)
		return func(ctx context.Context, e *env, args []string) error {
			o, n, err := openNode(ctx, args[0], sf, args[1])
			if err != nil {
				return err
			}
			defer o.close()
			if !*asJSON {
				var children []*zarr.Node
				if n.Kind != zarr.KindArray {
					// As the mount's info.txt: the children as listed.
					children, err = o.h.Children(ctx, n.Path)
					if err != nil && !errors.Is(err, zarr.ErrNotListable) {
						return o.errorf(args[1], err)
					}
				}
				if _, err := io.WriteString(e.stdout, view.InfoText(n, children)); err != nil {
					return err
				}
				return nodeError(o, args[1], n)
			}
			b, err := json.MarshalIndent(n.Info(), "", "  ")
			if err != nil {
				return o.errorf(args[1], err)
			}
			if _, err = e.stdout.Write(append(b, '\n')); err != nil {
				return err
			}
			return nodeError(o, args[1], n)
		}
	},
}

// nodeError returns the error that makes node n (or its array's data)
// unusable, which info prints with the rest and then reports, so that it
// exits 1.
func nodeError(o *opened, path string, n *zarr.Node) error {
	if n.Err != nil {
		return o.errorf(path, n.Err)
	}
	if n.Array != nil && n.Array.Err != nil {
		return o.errorf(path, n.Array.Err)
	}
	return nil
}

var previewCommand = command{
	name: "preview", args: "STORE PATH", nargs: [2]int{2, 2},
	short: "exactly the bytes of MOUNT/PATH/preview.png, to standard output",
	summary: "Write a picture of a numeric array as PNG to standard output, exactly as\n" +
		"MOUNT/PATH/preview.png: the middle plane of its last two dimensions in viridis\n" +
		"(a line chart for rank 1), drawn from a smaller level of an OME-Zarr pyramid\n" +
		"when the array is a level of one.",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		budget := sizeValue(view.DefaultPreviewBudget)
		fl.Var(&budget, "preview-budget", "most decoded chunks the preview reads (e.g. 256MiB)")
		sf := storeFlagsFor(fl)
		return func(ctx context.Context, e *env, args []string) error {
			o, n, err := openNode(ctx, args[0], sf, args[1])
			if err != nil {
				return err
			}
			defer o.close()
			v := view.New(o.h, view.Config{Previews: true, PreviewBudget: int64(budget)})
			f := view.Find(v.Files(n, nil), "preview.png")
			if f == nil {
				return o.errorf(args[1], fmt.Errorf("no preview.png: not an array of numbers, or over the preview budget of %v", budget.String()))
			}
			bw := bufio.NewWriterSize(e.stdout, 1<<20)
			if err := view.Copy(ctx, bw, f); err != nil {
				return o.errorf(args[1], err)
			}
			return bw.Flush()
		}
	},
}

// catBlock is how much cat reads at a time.
const catBlock = 4 << 20

var catCommand = command{
	name: "cat", args: "STORE PATH", nargs: [2]int{2, 2},
	short: "exactly the bytes of MOUNT/PATH/data, to standard output",
	summary: "Write the decoded contents of an array to standard output, exactly as MOUNT/PATH/data\n" +
		"(for variable-length strings: the lines of MOUNT/PATH/data.txt).",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		sf := storeFlagsFor(fl)
		return func(ctx context.Context, e *env, args []string) error {
			o, n, err := openNode(ctx, args[0], sf, args[1])
			if err != nil {
				return err
			}
			defer o.close()
			ctx, stop := cancelOnBrokenPipe(ctx, e.stdout)
			err = cat(ctx, e.stdout, n)
			stop()
			if cause := context.Cause(ctx); cause == errBrokenPipe {
				// The reader went: end as a write to its pipe would
				// (a byte nobody reads; Go exits on SIGPIPE), or, where
				// SIGPIPE is ignored, with the write's error.
				e.stdout.Write([]byte{0})
				err = cause
			}
			if err != nil {
				return o.errorf(args[1], err)
			}
			return nil
		}
	},
}

// cat writes the contents of the array n to w.
func cat(ctx context.Context, w io.Writer, n *zarr.Node) error {
	switch {
	case n.Err != nil:
		return n.Err
	case n.Array == nil: // a draft root may be a group and an array
		return errors.New("is a group, not an array")
	case n.Array.Err != nil:
		return n.Array.Err
	case n.Array.Variable():
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := view.WriteText(ctx, bw, n.Array); err != nil {
			return err
		}
		return bw.Flush()
	}
	// Backed ahead of its first write: a fresh buffer faults page by page.
	size := int(min(catBlock, max(n.Array.Size(), 1)))
	buf := hugemem.Alloc(size, size)
	for off := int64(0); off < n.Array.Size(); {
		k, err := n.Array.ReadAt(ctx, buf, off)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return fmt.Errorf("write: %w", werr)
			}
			off += int64(k)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if k == 0 {
			return fmt.Errorf("read at %d: no progress", off)
		}
	}
	return nil
}
