package storeurl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/icechunk"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
)

// TestIcechunkContainers: a repository (spec 1: config.yaml; spec 2: the
// repo info's FlexBuffers config) whose virtual chunk lives
// in an S3 bucket (versitygw) reads it through the virtual chunk
// container with the longest matching url_prefix, at that container's
// endpoint and region (the environment's endpoint is wrong), unless the
// command line names an endpoint; a URL that
// matches no container, or only a container of a kind zarrfs does not
// read, is refused with a clear error while the native chunks beside it
// still read.
func TestIcechunkContainers(t *testing.T) {
	srv := s3test.Start(t)
	bucketDir := srv.MakeBucket("virt")
	ctx := context.Background()
	// Keys from the environment; its endpoint answers nothing.
	env := envOf("AWS_ENDPOINT_URL=http://127.0.0.1:1", "AWS_ACCESS_KEY_ID="+s3test.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+s3test.SecretKey, "AWS_REGION=eu-west-3")
	good := map[string]string{"endpoint_url": srv.Endpoint, "region": "us-east-1", "anonymous": "false",
		"allow_http": "true", "force_path_style": "true"}
	bad := map[string]string{"endpoint_url": "http://127.0.0.1:1", "region": "null", "allow_http": "true"}
	for _, tc := range []struct {
		name       string
		containers []icechunktest.Container
		refused    string // "": the virtual chunk reads
		flags      S3Options
	}{
		{"longest prefix", []icechunktest.Container{
			{Name: "bucket", Prefix: "s3://virt/", Store: "s3", Settings: bad},
			{Name: "data", Prefix: "s3://virt/data/", Store: "s3_compatible", Settings: good},
			{Name: "gcs", Prefix: "gcs", Store: "gcs"},
		}, "", S3Options{}},
		{"no match", []icechunktest.Container{
			{Name: "other", Prefix: "s3://other/", Store: "s3_compatible", Settings: good},
			{Name: "web", Prefix: "https://example.com/", Store: "http"},
		}, "matches none of the repository's virtual chunk containers (https://example.com/, s3://other/)", S3Options{}},
		{"wrong kind", []icechunktest.Container{
			{Name: "az", Prefix: "s3://virt/", Store: "azure"},
		}, `container "az" (s3://virt/) is a azure store`, S3Options{}},
		{"command line wins", []icechunktest.Container{
			{Name: "data", Prefix: "s3://virt/data/", Store: "s3_compatible", Settings: bad},
		}, "", S3Options{Endpoint: srv.Endpoint, Region: "us-east-1", PathStyle: true}},
		{"http endpoint not allowed", []icechunktest.Container{
			{Name: "data", Prefix: "s3://virt/data/", Store: "s3",
				Settings: map[string]string{"endpoint_url": srv.Endpoint, "allow_http": "false"}},
		}, "http:// endpoint without allow_http", S3Options{}},
	} {
		for _, spec := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/spec%d", tc.name, spec), func(t *testing.T) {
				tr := icechunktest.WriteWith(t, spec, false, icechunktest.Options{
					VirtualURL: "s3://virt/data/virtual.bin", Containers: tc.containers})
				virt, err := os.ReadFile(tr.VirtualFile)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(bucketDir, "data"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(bucketDir, "data", "virtual.bin"), virt, 0o644); err != nil {
					t.Fatal(err)
				}
				st, err := Open(ctx, tr.Dir, Options{Getenv: env, S3: tc.flags, Retry: remote.Policy{Attempts: 1}})
				if err != nil {
					t.Fatal(err)
				}
				defer closeStore(t, st)
				if _, ok := st.(*icechunk.Tree); !ok {
					t.Fatalf("opened %T, not an Icechunk tree", st)
				}
				if _, err := st.Get(ctx, "branches/main/group1/big/c/1/1"); err != nil {
					t.Errorf("native chunk: %v", err)
				}
				got, err := st.Get(ctx, "branches/main/group1/big/c/0/0")
				switch {
				case tc.refused == "" && err != nil:
					t.Errorf("virtual chunk: %v", err)
				case tc.refused == "" && string(got) != string(virt[7:]):
					t.Errorf("virtual chunk: %d bytes, not the %d at offset 7 of the object", len(got), len(virt)-7)
				case tc.refused != "" && (!errors.Is(err, icechunk.ErrRefused) || errors.Is(err, store.ErrNotExist) ||
					!strings.Contains(err.Error(), tc.refused)):
					t.Errorf("virtual chunk: %v, want refused: %s", err, tc.refused)
				}
			})
		}
	}
}
