package integration

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestMountLsLRGetxattr: GNU ls -lR asks every entry for security.selinux
// and system.posix_acl_*; over a fresh mount of the example it makes a
// couple of GETXATTR requests in all (coreutils stops asking a device that
// answers EOPNOTSUPP), not two per entry, and user.zarr.* still answers.
func TestMountLsLRGetxattr(t *testing.T) {
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store, "--debug")
	out := run(t, "ls", "-lR", m.dir)
	entries := len(regexp.MustCompile(`(?m)^[-d]r`).FindAll(out, -1))
	if entries < 50 {
		t.Fatalf("ls -lR listed %d entries:\n%s", entries, out)
	}
	if bytes.Contains(out, []byte("r-x+")) || bytes.Contains(out, []byte("r--+")) {
		t.Errorf("ls -l shows an ACL:\n%s", out)
	}
	if attr := run(t, "getfattr", "--only-values", "-n", "user.zarr.format", filepath.Join(m.dir, "temperature")); len(attr) == 0 {
		t.Error("getfattr user.zarr.format: empty")
	}
	time.Sleep(100 * time.Millisecond) // the debug log is written as requests arrive
	log := m.stderr.String()
	got := len(regexp.MustCompile(`rx \d+: GETXATTR .*"(security|system)\.`).FindAllString(log, -1))
	t.Logf("ls -lR over %d entries: %d GETXATTR requests for security.* and system.*", entries, got)
	if got > 4 {
		t.Errorf("ls -lR made %d GETXATTR requests for security.* and system.* over %d entries, want a few in all", got, entries)
	}
}
