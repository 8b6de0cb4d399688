package icechunk

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// repoFiles returns every metadata file of a spec 2 test repository (with
// compressed locations), by path.
func repoFiles(t testing.TB) map[string][]byte {
	t.Helper()
	filesOnce.Do(func() { files = readRepoFiles(t) })
	return files
}

var (
	filesOnce sync.Once
	files     map[string][]byte
)

func readRepoFiles(t testing.TB) map[string][]byte {
	tr := icechunktest.Write(t, 2, true)
	out := map[string][]byte{}
	filepath.WalkDir(tr.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(tr.Dir, p)
			if !strings.HasPrefix(rel, "chunks") {
				out[filepath.ToSlash(rel)], _ = os.ReadFile(p)
			}
		}
		return nil
	})
	return out
}

// reheader compresses a payload again behind the header of file.
func reheader(file, payload []byte) []byte {
	h, _ := ParseHeader(file)
	return icechunktest.FileBytes(h.SpecVersion, h.FileType, payload)
}

// parseAny parses data as the file type its header says.
func parseAny(data []byte) error {
	h, err := ParseHeader(data)
	if err != nil {
		return err
	}
	switch h.FileType {
	case TypeSnapshot:
		_, err = ParseSnapshot(data)
	case TypeManifest:
		_, err = ParseManifest(data)
	case TypeRepoInfo:
		_, err = ParseRepoInfo(data)
	}
	return err
}

// TestTruncatedFlatBuffers cuts every metadata file's FlatBuffer at many
// lengths, and corrupts its offsets: each parse fails with ErrCorrupt
// (or, cut where nothing needed is lost, succeeds), never panics.
func TestTruncatedFlatBuffers(t *testing.T) {
	for name, data := range repoFiles(t) {
		_, buf, err := payload(data, int(data[37]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for n := 0; n < len(buf); n += 1 + len(buf)/41 {
			if err := parseAny(reheader(data, buf[:n])); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s cut at %d: %v, want ErrCorrupt", name, n, err)
			}
		}
		// The root offset and the root table's vtable offset pointing
		// far away.
		for _, at := range []int{0, 4} {
			bad := append([]byte(nil), buf...)
			if at+4 <= len(bad) {
				flatbuffers.WriteUint32(bad[at:], 0x7ffffff0)
			}
			if err := parseAny(reheader(data, bad)); err == nil && at == 0 {
				t.Errorf("%s: root offset out of range parsed", name)
			}
		}
		if err := parseAny(data[:headerSize+3]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: truncated zstd: %v", name, err)
		}
	}
}

// TestBadHeaders: files that are not Icechunk files, or not of the kind
// expected, or of an unknown version or compression.
func TestBadHeaders(t *testing.T) {
	files := repoFiles(t)
	snap := files["snapshots/"+ID{0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34}.String()]
	mod := func(i int, b byte) []byte {
		c := append([]byte(nil), snap...)
		c[i] = b
		return c
	}
	for name, data := range map[string][]byte{
		"empty": nil, "short": snap[:20], "magic": mod(0, 'X'), "spec 3": mod(36, 3),
		"manifest type": mod(37, TypeManifest), "compression 7": mod(38, 7),
	} {
		if _, err := ParseSnapshot(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	// Uncompressed payloads (compression 0) are read too.
	_, buf, _ := payload(snap, TypeSnapshot)
	plain := append(append([]byte(nil), snap[:headerSize]...), buf...)
	plain[38] = 0
	if _, err := ParseSnapshot(plain); err != nil {
		t.Errorf("uncompressed: %v", err)
	}
}

// TestHostileRepos: references that point nowhere, a cycle of parents, a
// manifest id naming a snapshot file, a missing manifest, virtual chunks
// whose object changed or whose URL is not allowed. Each fails the node
// or chunk it concerns with a clear error; the rest reads.
func TestHostileRepos(t *testing.T) {
	ctx := context.Background()
	tr := icechunktest.Write(t, 1, false)
	s3 := ID(tr.Snaps["s3"])
	// A branch to a snapshot that does not exist, and one whose
	// snapshot is its own parent.
	os.MkdirAll(filepath.Join(tr.Dir, "refs", "branch.nowhere"), 0o755)
	os.WriteFile(filepath.Join(tr.Dir, "refs", "branch.nowhere", "ref.json"), []byte(`{"snapshot":"AAAAAAAAAAAAAAAAAAA0"}`), 0o644)
	icechunktest.WriteLoop(t, tr.Dir)

	st, _ := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
	r, err := Open(ctx, st, Options{OpenURL: openFileURL}) // file:// not allowed
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Ref(ctx, "nowhere"); !errors.Is(err, ErrCorrupt) || errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "AAAAAAAAAAAAAAAAAAA0") {
		t.Errorf("branch to nowhere: %v", err)
	}
	snaps, err := r.Snapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 8 { // 6, the loop, and the unreadable one
		t.Errorf("%d snapshots: %+v", len(snaps), snaps)
	}
	s, err := r.Ref(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "group1/big/c/0/0"); !errors.Is(err, ErrRefused) {
		t.Errorf("file:// virtual chunk from a repository not allowed it: %v", err)
	}
	if _, err := s.Get(ctx, "group1/big/c/0/1"); err != nil {
		t.Errorf("sibling chunk: %v", err)
	}

	// Manifests: s3's manifest of big replaced by a snapshot file (a
	// manifest id naming a file of another kind), small's deleted.
	man := map[string]ID{}
	for _, n := range s.file.Nodes {
		if n.Array != nil {
			man[n.Path] = n.Array.Manifests[0].ID
		}
	}
	snapData, _ := os.ReadFile(filepath.Join(tr.Dir, "snapshots", s3.String()))
	os.WriteFile(filepath.Join(tr.Dir, "manifests", man["/group1/big"].String()), snapData, 0o644)
	os.Remove(filepath.Join(tr.Dir, "manifests", man["/group1/small"].String()))
	r2, _ := Open(ctx, st, Options{})
	s, _ = r2.Ref(ctx, "main")
	if _, err := s.Get(ctx, "group1/big/c/1/1"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("manifest that is a snapshot: %v", err)
	}
	if _, err := s.Get(ctx, "group1/small/c/0"); err == nil || errors.Is(err, store.ErrNotExist) {
		t.Errorf("missing manifest: %v, want an error that is not 'chunk absent'", err)
	}
	if b, err := s.Get(ctx, "group1/zarr.json"); err != nil || len(b) == 0 {
		t.Errorf("sibling metadata: %v", err)
	}

	// A repo info whose branch points past its snapshots.
	b := flatbuffers.NewBuilder(256)
	name := b.CreateString("main")
	b.StartObject(2)
	b.PrependUOffsetTSlot(0, name, 0)
	b.PrependUint32Slot(1, 99, 0)
	ref := b.EndObject()
	branches := icechunktest.TableVector(b, []flatbuffers.UOffsetT{ref})
	b.StartObject(13)
	b.PrependUOffsetTSlot(2, branches, 0)
	b.Finish(b.EndObject())
	if _, err := ParseRepoInfo(icechunktest.FileBytes(2, TypeRepoInfo, b.FinishedBytes())); !errors.Is(err, ErrCorrupt) {
		t.Errorf("branch to snapshot index 99: %v", err)
	}

	// A virtual chunk whose file was modified after the time its
	// reference records.
	tr3, r3 := openTestRepo(t, 2, false)
	s, _ = r3.Ref(ctx, "main")
	if _, err := s.Get(ctx, "group1/big/c/0/0"); err != nil {
		t.Fatalf("virtual chunk: %v", err)
	}
	later := time.Date(2101, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(filepath.Dir(tr3.Dir), "virtual.bin"), later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "group1/big/c/0/0"); !errors.Is(err, ErrChanged) {
		t.Errorf("virtual chunk modified after its reference: %v", err)
	}
	for _, loc := range []string{"ftp://host/x", "s3:///nobucket", "http://h/a/../../b", "file://otherhost/x"} {
		c := &ChunkRef{Location: loc, Length: 1}
		if _, err := r3.readRef(ctx, c, store.All); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want ErrRefused", loc, err)
		}
	}
}

// TestHostileCorpus parses each file of testdata/hostile (truncated
// FlatBuffers, offsets and vtables out of range, a zstd stream cut short,
// a manifest whose header says snapshot) as its header says: each is
// refused with ErrCorrupt.
func TestHostileCorpus(t *testing.T) {
	names, err := filepath.Glob("testdata/hostile/*")
	if err != nil || len(names) < 5 {
		t.Fatalf("hostile corpus: %v, %d files", err, len(names))
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := parseAny(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// TestZstdBomb: a metadata file whose zstd frame declares more than the
// bound (a frame header naming 300 MiB, then one RLE block) is refused
// before anything is allocated for it; the same frame declaring what
// its block holds is decoded.
func TestZstdBomb(t *testing.T) {
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic; single segment, 8-byte content size
	frame = binary.LittleEndian.AppendUint64(frame, 300<<20)
	const size = 64 << 10
	h := uint32(1 | 1<<1 | size<<3) // last block, RLE, 64 KiB
	frame = append(frame, byte(h), byte(h>>8), byte(h>>16), 0)
	bomb := append(icechunktest.FileBytes(2, TypeSnapshot, nil)[:headerSize], frame...)
	if _, err := ParseSnapshot(bomb); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "zstd") {
		t.Errorf("bomb: %v", err)
	}
	// The same frame declaring 64 KiB is read (and is no FlatBuffer).
	binary.LittleEndian.PutUint64(bomb[headerSize+5:], 64<<10)
	if _, err := ParseSnapshot(bomb); err == nil || strings.Contains(err.Error(), "zstd") {
		t.Errorf("small frame: %v, want a FlatBuffer error", err)
	}
}
