//go:build !linux

package fs

import (
	"fmt"
	"runtime"

	"github.com/zarrfs/zarrfs/zarr"
)

// This file stands in for the FUSE layer where zarrfs has none (every
// system but Linux: go-fuse's macOS support needs macFUSE, and Windows has
// no FUSE): mounting says so and names the servers that show the same
// tree without FUSE (package serve).

// ErrNoFUSE is the error of a mount where zarrfs cannot mount.
var ErrNoFUSE = fmt.Errorf("FUSE mounts are not supported on %s: serve the tree instead with `zarrfs serve webdav STORE` or `zarrfs serve nfs STORE`", runtime.GOOS)

// Server is a mounted hierarchy; there is none here.
type Server struct{}

// Mount fails with ErrNoFUSE.
func Mount(string, *zarr.Hierarchy, Config) (*Server, error) { return nil, ErrNoFUSE }

// Wait returns at once.
func (s *Server) Wait() {}

// Unmount fails with ErrNoFUSE.
func (s *Server) Unmount() error { return ErrNoFUSE }

// Detach fails with ErrNoFUSE.
func (s *Server) Detach() error { return ErrNoFUSE }

// Unmount fails with ErrNoFUSE.
func Unmount(string, bool) error { return ErrNoFUSE }

// CheckMountpoint fails with ErrNoFUSE.
func CheckMountpoint(string) error { return ErrNoFUSE }
