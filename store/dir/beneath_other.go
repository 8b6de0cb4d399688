//go:build !linux

package dir

import (
	"io/fs"
	"os"
)

// beneath is Linux's openat2(2) path; elsewhere the store uses os.Root.
type beneath struct{}

func openBeneath(string) (*beneath, error) { return &beneath{}, nil }

func (*beneath) open(string, int) (*os.File, bool, error) { return nil, false, nil }
func (*beneath) stat(string) (fs.FileInfo, bool, error)   { return nil, false, nil }
func (*beneath) openRead(string, int) (readFile, fs.FileInfo, bool, error) {
	return nil, nil, false, nil
}
func (*beneath) close() error { return nil }

func (*beneath) disable() {}

// sameFile is os.SameFile: the store's file information comes from os.
func sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }
