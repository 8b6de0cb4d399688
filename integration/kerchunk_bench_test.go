package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/zarr"
)

// BenchmarkKerchunkRemote reads one array through a web server 50 ms
// away (remotetest.Proxy; ZARRFS_KERCHUNK_BENCH_LATENCY changes it) with
// `zarrfs cat`, three ways over the same chunks: a plain v2 Zarr store
// (zarr/), a local Kerchunk reference set naming each chunk file by URL
// (kerchunk-files/), and one naming byte ranges of a single file holding
// the chunks end to end, as a reference set of a NetCDF file does
// (kerchunk-ranges/). The array is 128 MiB of float32 in 1 MiB zstd
// chunks (ZARRFS_KERCHUNK_BENCH_MIB). MB/s of decoded data:
//
//	go test -run NONE -bench KerchunkRemote -benchtime 2x ./integration/
func BenchmarkKerchunkRemote(b *testing.B) {
	mib := 128
	if v, err := strconv.Atoi(os.Getenv("ZARRFS_KERCHUNK_BENCH_MIB")); err == nil && v > 0 {
		mib = v
	}
	latency := 50 * time.Millisecond
	if v, err := time.ParseDuration(os.Getenv("ZARRFS_KERCHUNK_BENCH_LATENCY")); err == nil {
		latency = v
	}
	ctx := context.Background()
	root := b.TempDir()
	zdir := filepath.Join(root, "t.zarr")
	os.Mkdir(zdir, 0o755)
	w, err := dir.Open(zdir, dir.Options{})
	if err != nil {
		b.Fatal(err)
	}
	rowElems, rows := int64(1<<18), int64(mib)
	if err := zarr.CreateGroup(ctx, w, "", zarr.GroupMeta{Format: zarr.FormatV2}); err != nil {
		b.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, w, "a", zarr.ArrayMeta{
		Format: zarr.FormatV2, Shape: []int64{rows, rowElems}, ChunkShape: []int64{1, rowElems}, DataType: "<f4",
		FillValue: 0, Compressor: &zarr.CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 3}},
	})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, rowElems*4)
	seed := uint32(1)
	for r := range rows {
		for i := range rowElems {
			seed = seed*1664525 + 1013904223
			v := float32(math.Round(math.Sin(float64(r*rowElems+i)/5000)*1000)) + float32(seed>>28)
			binary.LittleEndian.PutUint32(buf[i*4:], math.Float32bits(v))
		}
		if _, err := a.WriteAt(ctx, buf, r*rowElems*4); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()

	fs := httptest.NewServer(http.FileServer(http.Dir(root)))
	defer fs.Close()
	proxy := &remotetest.Proxy{Target: fs.URL, Latency: latency}
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	// The two reference sets, over the same chunk bytes.
	doc := func(name string) string {
		b2, err := os.ReadFile(filepath.Join(zdir, name))
		if err != nil {
			b.Fatal(err)
		}
		return string(b2)
	}
	files := map[string]any{".zgroup": doc(".zgroup"), "a/.zarray": doc("a/.zarray")}
	ranges := map[string]any{".zgroup": doc(".zgroup"), "a/.zarray": doc("a/.zarray")}
	var all bytes.Buffer
	for r := range rows {
		key := fmt.Sprintf("a/%d.0", r)
		chunk, err := os.ReadFile(filepath.Join(zdir, key))
		if err != nil {
			b.Fatal(err)
		}
		files[key] = []any{ps.URL + "/t.zarr/" + key, 0, len(chunk)}
		ranges[key] = []any{ps.URL + "/all.bin", all.Len(), len(chunk)}
		all.Write(chunk)
	}
	if err := os.WriteFile(filepath.Join(root, "all.bin"), all.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	for name, refs := range map[string]map[string]any{"files.json": files, "ranges.json": ranges} {
		j, _ := json.Marshal(refs)
		if err := os.WriteFile(filepath.Join(root, name), j, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("array: %d MiB of float32 in %d chunks of 1 MiB, zstd: %.1f MiB stored; latency %v", mib, rows, float64(all.Len())/(1<<20), latency)

	for _, c := range []struct{ name, store string }{
		{"zarr", ps.URL + "/t.zarr"},
		{"kerchunk-files", filepath.Join(root, "files.json")},
		{"kerchunk-ranges", filepath.Join(root, "ranges.json")},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(rows * rowElems * 4)
			for range b.N {
				cmd := exec.Command(zarrfsBin, "cat", c.store, "a")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					b.Fatalf("zarrfs cat %s: %v\n%s", c.store, err, stderr.String())
				}
			}
		})
	}
}
