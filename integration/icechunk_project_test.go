package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk"
	"github.com/zarrfs/zarrfs/store/s3"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
)

// projectValues is what the Icechunk project's tests/test_can_read_old.py
// wrote in each snapshot (by commit message) of its test repositories
// (write_a_test_repo, or write_a_split_repo when split):
// for each array, its elements (one value repeated, except small_chunks
// after "delete a chunk"), nil where the array is absent. Arrays are
// float32 of 100 elements (fill NaN) and int8 of 5 (fill 8).
func projectValues(split bool, message, array string) []float64 {
	rep := func(v float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	byMessage := map[string]map[string][]float64{
		"empty structure":   {"group1/big_chunks": rep(math.NaN(), 100), "group1/small_chunks": rep(8, 5)},
		"fill data":         {"group1/big_chunks": rep(42, 100), "group1/small_chunks": rep(84, 5)},
		"set virtual chunk": {"group1/big_chunks": rep(42, 100), "group1/small_chunks": rep(84, 5)},
		"delete a chunk":    {"group1/big_chunks": rep(42, 100), "group1/small_chunks": {84, 84, 84, 84, 8}},
		"some more structure": {"group1/big_chunks": rep(42, 100), "group1/small_chunks": {84, 84, 84, 84, 8},
			"group2/group3/group4/group5/inner": rep(math.NaN(), 100)},
		"write data":                        {"group1/split": rep(120, 100), "group1/small_chunks": rep(0, 5)},
		"write data again":                  {"group1/split": rep(12, 100), "group1/small_chunks": rep(1, 5)},
		"write data again with more splits": {"group1/split": rep(14, 100), "group1/small_chunks": rep(3, 5)},
	}
	if split {
		byMessage["empty structure"] = map[string][]float64{"group1/split": rep(math.NaN(), 100), "group1/small_chunks": rep(8, 5)}
	}
	return byMessage[message][array]
}

// projectBytes is projectValues as the bytes of data.
func projectBytes(vals []float64, array string) []byte {
	var b bytes.Buffer
	for _, v := range vals {
		if strings.HasSuffix(array, "small_chunks") {
			b.WriteByte(byte(int8(v)))
		} else {
			binary.Write(&b, binary.LittleEndian, math.Float32bits(float32(v)))
		}
	}
	return b.Bytes()
}

// TestIcechunkProjectRepos reads every array of every branch, tag and
// snapshot of the Icechunk project's committed test repositories
// (test-repo-v1, -v2, -v2-migrated and split-repo-v1, -v2, -v2-migrated
// of icechunk-python/tests/data) with zarrfs cat --ref, from the
// directory, from an S3 bucket (versitygw) and over HTTP, and compares
// them with what the project's script wrote (projectValues). The one
// virtual chunk, at s3://testbucket/can_read_old/chunk-1, is put in the
// S3 server as the project's reader does (the bytes of big_chunks'
// chunk c/0/1). The repositories are those in
// store/icechunk/testdata/project (see its SOURCE), or the copy of the
// project's tests/data that ZARRFS_ICECHUNK_TESTDATA names.
func TestIcechunkProjectRepos(t *testing.T) {
	root := os.Getenv("ZARRFS_ICECHUNK_TESTDATA")
	if root == "" {
		root = filepath.Join("..", "store", "icechunk", "testdata", "project")
	}
	ctx := context.Background()
	srv := startS3(t)
	srv.MakeBucket("testbucket")
	srv.MakeBucket("repos")
	web := httptest.NewServer(nethttp.FileServer(nethttp.Dir(root)))
	defer web.Close()
	arrays := []string{"group1/big_chunks", "group1/small_chunks", "group1/split", "group2/group3/group4/group5/inner"}
	checked := 0
	for _, name := range []string{"test-repo-v1", "test-repo-v2", "test-repo-v2-migrated", "split-repo-v1", "split-repo-v2", "split-repo-v2-migrated"} {
		local := filepath.Join(root, name)
		st, err := dir.Open(local, dir.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := icechunk.Open(ctx, st, icechunk.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasPrefix(name, "test-repo") {
			s, err := r.Ref(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			chunk, err := s.Get(ctx, "group1/big_chunks/c/0/1")
			if err != nil {
				t.Fatal(err)
			}
			vs, _ := s3.New("testbucket", "", s3.Options{Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
			if err := vs.Set(ctx, "can_read_old/chunk-1", chunk); err != nil {
				t.Fatal(err)
			}
			vs.Close()
		}
		upload(t, srv, local, "repos", name+"/")
		snaps, err := r.Snapshots(ctx)
		if err != nil {
			t.Fatal(err)
		}
		message := map[icechunk.ID]string{}
		refs := map[string]icechunk.ID{}
		for _, s := range snaps {
			message[s.ID] = s.Message
			refs[s.ID.String()] = s.ID
		}
		for n, id := range r.Branches() {
			refs[n] = id
		}
		for n, id := range r.Tags() {
			refs[n] = id
		}
		stores := []string{local, "s3://repos/" + name}
		if !strings.HasSuffix(name, "v1") { // over HTTP a spec 1 repository shows main only
			stores = append(stores, web.URL+"/"+name)
		}
		for ref, id := range refs {
			for _, a := range arrays {
				want := projectValues(strings.HasPrefix(name, "split"), message[id], a)
				for i, store := range stores {
					if i > 0 && ref != "main" && a != "group1/big_chunks" {
						continue // the remote stores: main's arrays and big_chunks of every ref
					}
					// The repositories' virtual chunk containers name
					// the project's own S3 server (localhost:4200);
					// --s3-endpoint wins over them, AWS_ENDPOINT_URL
					// would not.
					res := runZarrfs(t, "cat", "--s3-endpoint", srv.Endpoint, "--ref", ref, store, a)
					if want == nil {
						if res.err == nil {
							t.Errorf("%s --ref %q (%s) %s: read, but the script wrote no such array", store, ref, message[id], a)
						}
						continue
					}
					if res.err != nil {
						t.Errorf("%s --ref %q (%s) %s: %v: %s", store, ref, message[id], a, res.err, res.stderr)
						continue
					}
					sameBytes(t, store+" --ref "+ref+" "+a, res.stdout, projectBytes(want, a))
					checked++
				}
			}
		}
	}
	t.Logf("%d arrays read equal to the script's values", checked)
}
