//go:build linux

package fs

import (
	"strings"
	"syscall"

	"github.com/zarrfs/zarrfs/view"
)

// xattrs is a node's extended attributes, sorted by name, with the
// getxattr(2) and listxattr(2) protocols.
type xattrs []view.Xattr

// ours reports whether name can be one of zarrfs's attributes: the others
// (security.selinux, system.posix_acl_access, which ls -l asks for every
// file) are answered without making the node's attributes.
func ours(name string) bool { return strings.HasPrefix(name, view.XattrPrefix) }

// notOurs answers getxattr(2) for a name outside the user namespace
// without making the node's attributes: EOPNOTSUPP, as a file system
// without security labels or POSIX ACLs answers. ls -l asks for
// security.selinux and system.posix_acl_* of every entry, and coreutils
// stops asking on a device once it answers so, where ENODATA would cost a
// round trip per entry and name. Other user.* names are ENODATA.
func notOurs(name string) syscall.Errno {
	if strings.HasPrefix(name, "user.") {
		return syscall.ENODATA
	}
	return syscall.EOPNOTSUPP
}

// get answers getxattr(2): the value of name copied to dest, or its size
// when dest is empty; ERANGE when dest is too small, ENODATA when there is
// no such attribute.
func (x xattrs) get(name string, dest []byte) (uint32, syscall.Errno) {
	for _, a := range x {
		if a.Name == name {
			return fill(dest, a.Value)
		}
	}
	return 0, syscall.ENODATA
}

// list answers listxattr(2): the NUL-terminated names copied to dest, or
// their size when dest is empty; ERANGE when dest is too small.
func (x xattrs) list(dest []byte) (uint32, syscall.Errno) {
	var names []byte
	for _, a := range x {
		names = append(names, a.Name...)
		names = append(names, 0)
	}
	return fill(dest, names)
}

// fill copies v to dest following the xattr size protocol.
func fill(dest, v []byte) (uint32, syscall.Errno) {
	if len(dest) == 0 {
		return uint32(len(v)), 0
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}
