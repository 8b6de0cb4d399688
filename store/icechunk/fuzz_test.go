package icechunk

import (
	"testing"
)

// fuzzSeeds adds the metadata files of a test repository, whole and cut,
// and a few hostile headers.
func fuzzSeeds(f *testing.F, fileType int) {
	for _, data := range repoFiles(f) {
		if int(data[37]) != fileType {
			continue
		}
		f.Add(data)
		_, buf, _ := payload(data, fileType)
		plain := append(append([]byte(nil), data[:headerSize]...), buf...)
		plain[38] = 0
		f.Add(plain)
		f.Add(plain[:headerSize+len(buf)/2])
		f.Add(data[:len(data)-3])
	}
	f.Add([]byte(Magic))
	f.Add(append([]byte(Magic+"                        "), 2, byte(fileType), 0, 4, 0, 0, 0))
}

func FuzzParseSnapshot(f *testing.F) {
	fuzzSeeds(f, TypeSnapshot)
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseSnapshot(data); err == nil {
			newSnapshot(&Repo{}, s)
		}
	})
}

func FuzzParseManifest(f *testing.F) {
	fuzzSeeds(f, TypeManifest)
	f.Fuzz(func(t *testing.T, data []byte) { ParseManifest(data) })
}

func FuzzParseRepoInfo(f *testing.F) {
	fuzzSeeds(f, TypeRepoInfo)
	f.Fuzz(func(t *testing.T, data []byte) { ParseRepoInfo(data) })
}

func FuzzParseID(f *testing.F) {
	f.Add("1CECHNKREP0F1RSTCMT0")
	f.Add("1cechnkrep0f1rstcmtO")
	f.Add("ZZZZZZZZZZZZZZZZZZZZ")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err == nil && len(s) == 20 && s == id.String() {
			return
		}
		if err == nil {
			if _, err := ParseID(id.String()); err != nil {
				t.Fatalf("%q: %v", id.String(), err)
			}
		}
	})
}

// FuzzChunkKey resolves keys against a snapshot of the test repository:
// any key gives bytes or an error, never a panic.
func FuzzChunkKey(f *testing.F) {
	var snap *SnapshotFile
	for name, data := range repoFiles(f) {
		if s, err := ParseSnapshot(data); err == nil && len(name) > 0 && len(s.Nodes) > len(nodesOf(snap)) {
			snap = s
		}
	}
	s := newSnapshot(&Repo{}, snap)
	for _, k := range []string{"group1/big/c/0/1", "group1/small/c/4", "group2/inner/2.1", "group2/inner/c/0/0",
		"group1/big/c/9/9", "group1/big/c/01/1", "group1/big/c/-1/0", "group1/big/c/0", "zarr.json", "group1/zarr.json", "c/0"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		n, idx, err := s.chunkOf(key)
		if err == nil && len(idx) != len(n.node.Array.NumChunks) {
			t.Fatalf("%q: index %v for rank %d", key, idx, len(n.node.Array.NumChunks))
		}
	})
}

func nodesOf(s *SnapshotFile) []Node {
	if s == nil {
		return nil
	}
	return s.Nodes
}
