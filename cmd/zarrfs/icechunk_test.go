package main

import (
	"encoding/binary"
	"math"
	nethttp "net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
)

// TestIcechunkRefs reads every array of every branch, tag and snapshot of
// Icechunk repositories of spec 1 and 2 (icechunktest.Write: inline,
// native and virtual chunks, two manifests for one array, a deleted
// chunk) with cat --ref, and compares the bytes with the formulas the
// writer used; ls, tree and info take --ref too, main by default.
func TestIcechunkRefs(t *testing.T) {
	for _, spec := range []int{1, 2} {
		tr := icechunktest.Write(t, spec, spec == 2)
		refs := map[string]string{"main": "s3", "dev": "s5", "v1": "s4", "v2": "s5"}
		for name, id := range tr.Snaps {
			refs[id.String()] = name
		}
		for ref, snap := range refs {
			for _, a := range []struct {
				path     string
				itemsize int
			}{{"group1/big", 4}, {"group1/small", 1}, {"group2/inner", 2}} {
				want := icechunktest.Expected(snap, a.path)
				code, out, errOut := runCLI(t, "cat", "--ref", ref, tr.Dir, a.path)
				if want == nil {
					if code == 0 {
						t.Errorf("spec %d %s %s: cat of an absent array succeeded", spec, ref, a.path)
					}
					continue
				}
				if code != 0 {
					t.Fatalf("spec %d: cat --ref %s %s: status %d: %s", spec, ref, a.path, code, errOut)
				}
				if len(out) != len(want)*a.itemsize {
					t.Fatalf("spec %d %s %s: %d bytes, want %d", spec, ref, a.path, len(out), len(want)*a.itemsize)
				}
				for i, w := range want {
					var got float64
					switch a.itemsize {
					case 1:
						got = float64(int8(out[i]))
					case 2:
						got = float64(int16(binary.LittleEndian.Uint16([]byte(out[2*i:]))))
					case 4:
						got = float64(math.Float32frombits(binary.LittleEndian.Uint32([]byte(out[4*i:]))))
					}
					if got != w && !(math.IsNaN(got) && math.IsNaN(w)) {
						t.Fatalf("spec %d %s %s[%d] = %v, want %v", spec, ref, a.path, i, got, w)
					}
				}
			}
		}
		if code, out, errOut := runCLI(t, "ls", tr.Dir); code != 0 || !strings.Contains(out, "group1/") || strings.Contains(out, "group2") {
			t.Errorf("spec %d: ls (main): status %d: %s%s", spec, code, out, errOut)
		}
		if code, out, errOut := runCLI(t, "ls", "--ref", "v2", tr.Dir, "group2"); code != 0 || !strings.Contains(out, "array  inner  (5, 4)  int16  bytes,zstd") {
			t.Errorf("spec %d: ls --ref v2: status %d: %s%s", spec, code, out, errOut)
		}
		if code, out, errOut := runCLI(t, "tree", "--ref", "dev", tr.Dir); code != 0 || !strings.Contains(out, "inner") {
			t.Errorf("spec %d: tree --ref dev: status %d: %s%s", spec, code, out, errOut)
		}
		if code, out, errOut := runCLI(t, "info", "--ref", "v1", tr.Dir, "group1/small"); code != 0 || !strings.Contains(out, "int8") {
			t.Errorf("spec %d: info --ref v1: status %d: %s%s", spec, code, out, errOut)
		}
		if code, _, errOut := runCLI(t, "ls", "--ref", "nope", tr.Dir); code != 1 || !strings.Contains(errOut, `"nope": icechunk: no such branch, tag or snapshot`) {
			t.Errorf("spec %d: --ref nope: status %d: %s", spec, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "ls", "--ref", "main", exampleStore(t)); code != 1 || !strings.Contains(errOut, "not an Icechunk repository") {
		t.Errorf("--ref on a Zarr store: status %d: %s", code, errOut)
	}
}

// TestRemoteIcechunkRoundTrips opens Icechunk repositories of spec 1 and
// 2 over HTTP with every request answered 150 ms late, and counts the
// round trips `ls` waits for: requests that arrive within 100 ms of the
// one before are one round trip. Opening costs two looking for a Zarr
// root, one for the files that say which spec the repository follows
// (read at once) and one for the snapshot: four.
func TestRemoteIcechunkRoundTrips(t *testing.T) {
	const delay, gap = 150 * time.Millisecond, 100 * time.Millisecond
	for _, spec := range []int{1, 2} {
		tr := icechunktest.Write(t, spec, false)
		var mu sync.Mutex
		var arrivals []time.Time
		var paths []string
		url, _ := serveDir(t, tr.Dir, func(r *nethttp.Request, _ int64) remotetest.Action {
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			return remotetest.Action{Delay: delay}
		})
		if code, out, errOut := runCLI(t, "ls", url); code != 0 || !strings.Contains(out, "group1/") {
			t.Fatalf("spec %d: ls over HTTP: status %d: %s%s", spec, code, out, errOut)
		}
		mu.Lock()
		trips := 0
		for i, at := range arrivals {
			if i == 0 || at.Sub(arrivals[i-1]) > gap {
				trips++
			}
		}
		mu.Unlock()
		if trips > 4 {
			t.Errorf("spec %d: ls waited for %d round trips, want 4: %q", spec, trips, paths)
		}
	}
}
