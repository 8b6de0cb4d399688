package view

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaderGolden compares the data.hdr and data.nhdr of the example
// hierarchy's arrays with testdata/headers/ (rewritten with -update; GDAL
// and teem read such headers in integration/foreign_test.go). temperature
// has band names from its time coordinate and a map info from its lat/lon
// coordinates; sparse a data ignore value; lat is rank 1.
func TestHeaderGolden(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{"temperature", "image", "sparse", "lat", "gravity"} {
		_, files := exampleNode(t, path)
		for _, name := range []string{"data.hdr", "data.nhdr"} {
			f := Find(files, name)
			if f == nil {
				t.Errorf("%s has no %s", path, name)
				continue
			}
			var b strings.Builder
			if err := Copy(ctx, &b, f); err != nil {
				t.Fatalf("%s/%s: %v", path, name, err)
			}
			golden := filepath.Join("testdata", "headers", path+"."+strings.TrimPrefix(name, "data."))
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("golden file: %v (regenerate with go test -run TestHeaderGolden -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s/%s:\n%s\nwant (%s):\n%s", path, name, b.String(), golden, want)
			}
		}
	}
}

// TestENVIHeaderInterrupted: a caller that gives up while data.hdr reads
// its coordinates gets an error, and the next caller the whole header,
// map info included: an interrupted stat leaves nothing half made.
func TestENVIHeaderInterrupted(t *testing.T) {
	_, files := exampleNode(t, "temperature")
	f := Find(files, "data.hdr")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Size(ctx); err == nil {
		t.Error("Size with a cancelled context: no error")
	}
	var b strings.Builder
	if err := Copy(context.Background(), &b, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "map info = {Geographic Lat/Lon") {
		t.Errorf("after an interrupted call, data.hdr is\n%s", b.String())
	}
}
