package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/s3"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
	"github.com/zarrfs/zarrfs/zarr"
)

// TestRemoteThroughput measures sequential read throughput of a zstd
// array from versitygw on loopback, directly and through a proxy adding
// 20 ms to every request, with `zarrfs cat` and with dd on a mount. It
// runs only with ZARRFS_REMOTE_BENCH=1 (ZARRFS_REMOTE_BENCH_MIB sets the
// array's size, 256 by default; ZARRFS_REMOTE_BENCH_CONCURRENCY, when set,
// is passed as --store-concurrency) and logs the figures:
//
//	ZARRFS_REMOTE_BENCH=1 go test -run RemoteThroughput -v ./integration/
func TestRemoteThroughput(t *testing.T) {
	if os.Getenv("ZARRFS_REMOTE_BENCH") != "1" {
		t.Skip("set ZARRFS_REMOTE_BENCH=1 to measure remote read throughput")
	}
	mib := 256
	if v, err := strconv.Atoi(os.Getenv("ZARRFS_REMOTE_BENCH_MIB")); err == nil && v > 0 {
		mib = v
	}
	srv := startS3(t)
	srv.MakeBucket("bench")
	ctx := context.Background()
	w, err := s3.New("bench", "t.zarr", s3.Options{Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	// float32 rows of 1 MiB chunks (256 Ki elements; ZARRFS_REMOTE_BENCH_CHUNK_KIB
	// sets another size), zstd level 3; the values are whole numbers on a
	// sine with some noise (zstd: about 3:1).
	rowElems := int64(1 << 18)
	if v, err := strconv.Atoi(os.Getenv("ZARRFS_REMOTE_BENCH_CHUNK_KIB")); err == nil && v > 0 {
		rowElems = int64(v) << 8
	}
	rows := int64(mib) << 18 / rowElems
	if err := zarr.CreateGroup(ctx, w, "", zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, w, "a", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{rows, rowElems}, ChunkShape: []int64{1, rowElems}, DataType: "float32",
		FillValue: 0, Codecs: []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}},
			{Name: "zstd", Configuration: map[string]any{"level": 3, "checksum": false}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16*rowElems*4)
	seed := uint32(1)
	for r := int64(0); r < rows; r += 16 {
		n := min(16, rows-r)
		for i := range n * rowElems {
			seed = seed*1664525 + 1013904223
			v := float32(math.Round(math.Sin(float64(r*rowElems+i)/5000)*1000)) + float32(seed>>28)
			binary.LittleEndian.PutUint32(buf[i*4:], math.Float32bits(v))
		}
		if _, err := a.WriteAt(ctx, buf[:n*rowElems*4], r*rowElems*4); err != nil {
			t.Fatal(err)
		}
	}
	stored := dirSize(t, filepath.Join(srv.Dir, "bench", "t.zarr"))
	size := float64(rows * rowElems * 4)
	t.Logf("array: %d MiB of float32 in %d chunks of %d KiB, zstd: %.1f MiB stored", mib, rows, rowElems>>8, float64(stored)/(1<<20))

	var flags []string
	if c := os.Getenv("ZARRFS_REMOTE_BENCH_CONCURRENCY"); c != "" {
		flags = []string{"--store-concurrency", c}
		t.Logf("--store-concurrency %s", c)
	}
	proxy := &remotetest.Proxy{Target: srv.Endpoint, Latency: 20 * time.Millisecond}
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	local := filepath.Join(srv.Dir, "bench", "t.zarr")
	for _, ep := range []struct{ name, url string }{{"local directory (baseline)", ""}, {"loopback", srv.Endpoint}, {"+20ms per request", ps.URL}} {
		args := append([]string{"cat", "--s3-endpoint", ep.url}, append(flags, "s3://bench/t.zarr", "a")...)
		if ep.url == "" {
			args = []string{"cat", local, "a"}
		}
		// Output to /dev/null: capturing 256 MiB through a pipe would
		// measure the test, not zarrfs (the other tests check the bytes).
		cmd := exec.Command(zarrfsBin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			t.Fatalf("cat via %s: %v\n%s", ep.name, err, stderr.String())
		}
		t.Logf("zarrfs cat, %s: %.0f MB/s (%.2fs; %.2f CPU-s)", ep.name, size/d.Seconds()/1e6, d.Seconds(),
			(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds())
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return
	}
	for _, ep := range []struct{ name, url string }{{"local directory (baseline)", ""}, {"loopback", srv.Endpoint}, {"+20ms per request", ps.URL}} {
		var m *mounted
		if ep.url == "" {
			m = mountStore(t, local)
		} else {
			m = mountStore(t, "s3://bench/t.zarr", append([]string{"--s3-endpoint", ep.url}, flags...)...)
		}
		start := time.Now()
		run(t, "dd", "if="+filepath.Join(m.dir, "a", "data"), "of=/dev/null", "bs=1M")
		d := time.Since(start)
		t.Logf("dd bs=1M on the mount, %s: %.0f MB/s (%.2fs)", ep.name, size/d.Seconds()/1e6, d.Seconds())
	}
}

func dirSize(t *testing.T, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
