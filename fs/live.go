//go:build linux

package fs

import "github.com/zarrfs/zarrfs/view"

// snapshot is one generation of the hierarchy a mount shows: a live mount
// (Config.Live) renews it through its view.Tree, as the servers do.
type snapshot = view.Snapshot
