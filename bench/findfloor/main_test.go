package main

import (
	"slices"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestEntries checks the tree's numbering: every directory is listed by
// exactly one parent, under the name zarrfs gives it, and lists what a
// zarrfs directory of its kind lists.
func TestEntries(t *testing.T) {
	tr := &tree{groups: 3, arrays: 4}
	seen := map[uint64]string{}
	var walk func(node uint64, path string)
	walk = func(node uint64, path string) {
		names, nodes := tr.entries(node)
		for k, n := range nodes {
			if n == 0 {
				continue
			}
			if old, ok := seen[n]; ok {
				t.Fatalf("node %d is both %s and %s/%s", n, old, path, names[k])
			}
			seen[n] = path + "/" + names[k]
			walk(n, seen[n])
		}
	}
	walk(1, "")
	if len(seen) != 3+3*4 {
		t.Fatalf("%d directories, want %d", len(seen), 3+3*4)
	}
	for _, c := range []struct {
		node  uint64
		level int
		names []string
	}{
		{1, 0, []string{".zgroup", "g0000", "g0001", "g0002", "info.txt"}},
		{3, 1, []string{".zgroup", "a000", "a001", "a002", "a003", "dataset.nc", "info.txt"}},
		{5 + 4 + 2, 2, files},
	} {
		if level, _ := tr.level(c.node); level != c.level {
			t.Errorf("node %d: level %d, want %d", c.node, level, c.level)
		}
		if names, _ := tr.entries(c.node); !slices.Equal(names, c.names) {
			t.Errorf("node %d lists %q, want %q", c.node, names, c.names)
		}
	}
	if seen[5+4+2] != "/g0001/a002" {
		t.Errorf("node 11 is %s, want /g0001/a002", seen[11])
	}
}

// TestStatFiles: with -stat, files are looked up as regular files of
// their own nodes, and getxattr is EOPNOTSUPP; without, only directories.
func TestStatFiles(t *testing.T) {
	for _, stat := range []bool{false, true} {
		tr := &tree{groups: 1, arrays: 1, stat: stat}
		var out fuse.EntryOut
		st := tr.Lookup(nil, &fuse.InHeader{NodeId: 3}, "data", &out)
		switch {
		case !stat && st != fuse.ENOENT:
			t.Errorf("without -stat: lookup of a file: %v, want ENOENT", st)
		case stat && (st != fuse.OK || out.NodeId < fileBase || out.Attr.Mode&syscall.S_IFMT != syscall.S_IFREG):
			t.Errorf("with -stat: lookup of a file: %v, node %d, mode %o", st, out.NodeId, out.Attr.Mode)
		}
		var attr fuse.AttrOut
		if stat && (tr.GetAttr(nil, &fuse.GetAttrIn{InHeader: fuse.InHeader{NodeId: out.NodeId}}, &attr) != fuse.OK || attr.Mode&syscall.S_IFMT != syscall.S_IFREG) {
			t.Errorf("getattr of a file: mode %o", attr.Mode)
		}
		if _, st := tr.GetXAttr(nil, &fuse.InHeader{NodeId: 3}, "security.selinux", nil); st != fuse.Status(syscall.EOPNOTSUPP) {
			t.Errorf("getxattr: %v, want EOPNOTSUPP", st)
		}
	}
}
