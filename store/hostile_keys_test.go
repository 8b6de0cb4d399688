package store

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// HostileKey is a key of testdata/hostile/keys.txt and words of the reason
// ValidateKey must give for it (exported for the store_test package).
type HostileKey struct {
	Key, Reason string
}

// HostileKeys reads testdata/hostile/keys.txt.
func HostileKeys(t testing.TB) []HostileKey {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "hostile", "keys.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []HostileKey
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		quoted, reason, ok := strings.Cut(line, "\t")
		key, err := strconv.Unquote(quoted)
		if !ok || err != nil {
			t.Fatalf("keys.txt: bad line %q: %v", line, err)
		}
		out = append(out, HostileKey{key, reason})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
