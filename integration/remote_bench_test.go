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
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/s3"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
	"github.com/zarrfs/zarrfs/zarr"
)

// BenchmarkRemoteThroughput reads a zstd array sequentially from versitygw
// on loopback, directly and through a proxy adding 20 ms to every request,
// with `zarrfs cat` (cat/...) and with dd on a fresh mount for each read
// (dd/...), beside the same array in a local directory (.../local): MB/s
// of decoded data, and the CPU time of each `zarrfs cat`. The array is
// 256 MiB of float32 in 1 MiB chunks (ZARRFS_REMOTE_BENCH_MIB and
// ZARRFS_REMOTE_BENCH_CHUNK_KIB change them); ZARRFS_REMOTE_BENCH_CONCURRENCY,
// when set, is passed as --store-concurrency. Each read takes a second or
// more, so one round is enough:
//
//	go test -run NONE -bench RemoteThroughput -benchtime 1x ./integration/
func BenchmarkRemoteThroughput(b *testing.B) {
	mib := 256
	if v, err := strconv.Atoi(os.Getenv("ZARRFS_REMOTE_BENCH_MIB")); err == nil && v > 0 {
		mib = v
	}
	srv := startS3(b)
	srv.MakeBucket("bench")
	ctx := context.Background()
	w, err := s3.New("bench", "t.zarr", s3.Options{Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
	if err != nil {
		b.Fatal(err)
	}
	// float32 rows of 1 MiB chunks (256 Ki elements), zstd level 3; the
	// values are whole numbers on a sine with some noise (zstd: about 3:1).
	rowElems := int64(1 << 18)
	if v, err := strconv.Atoi(os.Getenv("ZARRFS_REMOTE_BENCH_CHUNK_KIB")); err == nil && v > 0 {
		rowElems = int64(v) << 8
	}
	rows := int64(mib) << 18 / rowElems
	if err := zarr.CreateGroup(ctx, w, "", zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
		b.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, w, "a", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{rows, rowElems}, ChunkShape: []int64{1, rowElems}, DataType: "float32",
		FillValue: 0, Codecs: []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}},
			{Name: "zstd", Configuration: map[string]any{"level": 3, "checksum": false}}},
	})
	if err != nil {
		b.Fatal(err)
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
			b.Fatal(err)
		}
	}
	local := filepath.Join(srv.Dir, "bench", "t.zarr")
	b.Logf("array: %d MiB of float32 in %d chunks of %d KiB, zstd: %.1f MiB stored", mib, rows, rowElems>>8, float64(dirSize(b, local))/(1<<20))
	size := rows * rowElems * 4

	var flags []string
	if c := os.Getenv("ZARRFS_REMOTE_BENCH_CONCURRENCY"); c != "" {
		flags = []string{"--store-concurrency", c}
	}
	proxy := &remotetest.Proxy{Target: srv.Endpoint, Latency: 20 * time.Millisecond}
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	endpoints := []struct{ name, url string }{{"local", ""}, {"loopback", srv.Endpoint}, {"20ms", ps.URL}}
	for _, ep := range endpoints {
		b.Run("cat/"+ep.name, func(b *testing.B) {
			args := append([]string{"cat", "--s3-endpoint", ep.url}, append(flags, "s3://bench/t.zarr", "a")...)
			if ep.url == "" {
				args = []string{"cat", local, "a"}
			}
			b.SetBytes(size)
			var cpu time.Duration
			for range b.N {
				// Output to /dev/null: capturing it through a pipe would
				// measure the benchmark, not zarrfs (the tests check the
				// bytes).
				cmd := exec.Command(zarrfsBin, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					b.Fatalf("zarrfs %v: %v\n%s", args, err, stderr.String())
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "CPU-s/op")
		})
	}
	for _, ep := range endpoints {
		b.Run("dd/"+ep.name, func(b *testing.B) {
			b.SetBytes(size)
			for range b.N {
				b.StopTimer()
				var m *mounted
				if ep.url == "" {
					m = mountStore(b, local)
				} else {
					m = mountStore(b, "s3://bench/t.zarr", append([]string{"--s3-endpoint", ep.url}, flags...)...)
				}
				b.StartTimer()
				run(b, "dd", "if="+filepath.Join(m.dir, "a", "data"), "of=/dev/null", "bs=1M")
				b.StopTimer()
				m.signalAndWait(b, syscall.SIGTERM, 10*time.Second)
				b.StartTimer()
			}
		})
	}
}

func dirSize(t testing.TB, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
