package icechunk

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// projectConfig is the config.yaml of the Icechunk project's
// icechunk-python/tests/data/test-repo-v1 (its shape: containers by
// name, stores tagged with their kind, a scalar-tagged local store).
const projectConfig = `inline_chunk_threshold_bytes: 12
get_partial_values_concurrency: null
compression: null
caching: null
storage: null
virtual_chunk_containers:
  tigris:
    name: tigris
    url_prefix: tigris
    store: !tigris
      region: null
      endpoint_url: https://fly.storage.tigris.dev
      anonymous: false
      allow_http: false
  az:
    name: az
    url_prefix: az
    store: !azure {}
  file:
    name: file
    url_prefix: file
    store: !local_file_system ''
  s3:
    name: s3
    url_prefix: s3://testbucket
    store: !s3_compatible
      region: us-east-1
      endpoint_url: http://localhost:4200
      anonymous: false
      allow_http: true
      force_path_style: true
manifest: null
`

func TestParseConfigYAML(t *testing.T) {
	cs, err := ParseConfigYAML([]byte(projectConfig))
	if err != nil {
		t.Fatal(err)
	}
	want := []Container{
		{Name: "s3", Prefix: "s3://testbucket", Store: "s3_compatible", Region: "us-east-1",
			Endpoint: "http://localhost:4200", AllowHTTP: true, ForcePathStyle: true},
		{Name: "tigris", Prefix: "tigris", Store: "tigris", Endpoint: "https://fly.storage.tigris.dev"},
		{Name: "file", Prefix: "file", Store: "local_file_system"},
		{Name: "az", Prefix: "az", Store: "azure"},
	}
	checkContainers(t, cs, want)
	for _, tc := range []struct{ scheme, url, name, err string }{
		{"s3", "s3://testbucket/a/b.nc", "s3", ""},
		{"s3", "s3://testbucket2/b.nc", "s3", ""}, // a string prefix, as Icechunk matches
		{"s3", "s3://other/b.nc", "", "matches none"},
		{"file", "file:///data/b.nc", "file", ""},
		{"https", "https://h/b.nc", "", "matches none"},
	} {
		c, err := container(cs, tc.scheme, tc.url)
		switch {
		case tc.err != "" && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want refused (%s)", tc.url, err, tc.err)
		case tc.err == "" && (err != nil || c.Name != tc.name):
			t.Errorf("%s: %+v, %v, want container %s", tc.url, c, err, tc.name)
		}
	}
	for _, bad := range []string{
		"virtual_chunk_containers: [1, 2",
		"virtual_chunk_containers:\n  a: 3\n",
		"virtual_chunk_containers:\n  a:\n    store: !s3 {}\n",
		"virtual_chunk_containers:\n  a:\n    url_prefix: s3://b/\n    store: {}\n",
	} {
		if _, err := ParseConfigYAML([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v, want corrupt", bad, err)
		}
	}
	for _, none := range []string{"", "virtual_chunk_containers: null\n", "manifest: null\n"} {
		if cs, err := ParseConfigYAML([]byte(none)); err != nil || len(cs) != 0 {
			t.Errorf("%q: %v, %v", none, cs, err)
		}
	}
}

// TestBadConfigRefusesVirtualOnly: a config.yaml that does not parse
// refuses the virtual chunks, while the rest of the repository reads.
func TestBadConfigRefusesVirtualOnly(t *testing.T) {
	tr := icechunktest.Write(t, 1, false)
	if err := os.WriteFile(filepath.Join(tr.Dir, "config.yaml"), []byte("virtual_chunk_containers: [1, 2"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
	ctx := context.Background()
	r, err := Open(ctx, st, Options{AllowFile: true, OpenURL: openFileURL})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := mustRef(t, r, "main")
	if _, err := s.Get(ctx, "group1/big/c/1/1"); err != nil {
		t.Errorf("native chunk: %v", err)
	}
	if _, err := s.Get(ctx, "group1/big/c/0/0"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("virtual chunk under a broken config.yaml: %v", err)
	}
}

func FuzzParseConfigYAML(f *testing.F) {
	f.Add([]byte(projectConfig))
	f.Add([]byte("virtual_chunk_containers: &a [*a]"))
	f.Add([]byte("a: &a [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nvirtual_chunk_containers: *a\n"))
	f.Add([]byte("virtual_chunk_containers:\n  x:\n    url_prefix: s3://b/\n    store: !s3 7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseConfigYAML(data)
		if err == nil {
			for _, c := range cs {
				container(cs, "s3", c.Prefix+"k")
			}
		}
	})
}

// TestConfigFlex: the containers of a spec 2 repository, from its repo
// info's FlexBuffers config as icechunktest writes serde's encoding.
func TestConfigFlex(t *testing.T) {
	tr := icechunktest.WriteWith(t, 2, false, icechunktest.Options{Containers: []icechunktest.Container{
		{Name: "data", Prefix: "s3://virt/data/", Store: "s3_compatible", Settings: map[string]string{
			"endpoint_url": "http://127.0.0.1:9000", "region": "us-east-1", "anonymous": "true",
			"allow_http": "true", "force_path_style": "true"}},
		{Name: "web", Prefix: "https://example.com/", Store: "http", Settings: map[string]string{"allow_http": "true"}},
		{Name: "local", Prefix: "file:///data/", Store: "local_file_system"},
		{Name: "tig", Prefix: "s3://t/", Store: "tigris", Settings: map[string]string{"region": "null", "anonymous": "false"}},
	}})
	st, _ := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
	r, err := Open(context.Background(), st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := []Container{
		{Name: "web", Prefix: "https://example.com/", Store: "http", AllowHTTP: true},
		{Name: "data", Prefix: "s3://virt/data/", Store: "s3_compatible", Region: "us-east-1",
			Endpoint: "http://127.0.0.1:9000", Anonymous: true, AllowHTTP: true, ForcePathStyle: true},
		{Name: "local", Prefix: "file:///data/", Store: "local_file_system"},
		{Name: "tig", Prefix: "s3://t/", Store: "tigris"},
	}
	got := r.Containers()
	checkContainers(t, got, want)
	for _, bad := range [][]byte{{1}, {0, 0, 3}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 9<<2 | 3, 8}} {
		if _, err := ParseConfigFlex(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%x: %v, want corrupt", bad, err)
		}
	}
}

func FuzzParseConfigFlex(f *testing.F) {
	tr := icechunktest.WriteWith(f, 2, false, icechunktest.Options{Containers: []icechunktest.Container{
		{Name: "data", Prefix: "s3://virt/", Store: "s3", Settings: map[string]string{"region": "x", "anonymous": "true"}},
		{Name: "local", Prefix: "file:///d/", Store: "local_file_system"},
	}})
	data, err := os.ReadFile(filepath.Join(tr.Dir, "repo"))
	if err != nil {
		f.Fatal(err)
	}
	info, err := ParseRepoInfo(data)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(info.Config)
	f.Add(info.Config[:len(info.Config)/2])
	f.Add(info.Config[len(info.Config)/2:])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 9<<2 | 3, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		if cs, err := ParseConfigFlex(data); err == nil {
			for _, c := range cs {
				container(cs, "s3", c.Prefix+"k")
			}
		}
	})
}

// flexPeer encodes, with the FlexBuffers of the FlatBuffers project's
// Python package (python3-flatbuffers), a RepositoryConfig shaped as
// serde writes it (enum variants as one-key maps, None as null), with
// the widths that encoder picks, and prints it in hex.
const flexPeer = `
import flatbuffers.flexbuffers as fx
s3 = {"region": "us-east-1", "endpoint_url": "http://127.0.0.1:9000", "anonymous": True,
      "allow_http": True, "force_path_style": False, "network_stream_timeout_seconds": 60, "requester_pays": False}
cfg = {"inline_chunk_threshold_bytes": 512, "get_partial_values_concurrency": None, "compression": None,
       "caching": None, "storage": None, "manifest": None, "previous_file": None,
       "virtual_chunk_containers": {
           "s3://bucket/data/": {"name": None, "url_prefix": "s3://bucket/data/", "store": {"s3_compatible": s3}},
           "https://example.com/": {"name": None, "url_prefix": "https://example.com/", "store": {"http": {"allow_http": "true"}}},
           "mem": {"name": "mem", "url_prefix": "memory://x/", "store": "in_memory"},
           "file:///d/" + "x" * 300 + "/": {"name": None, "url_prefix": "file:///d/" + "x" * 300 + "/", "store": {"local_file_system": "/d"}}}}
print(fx.Dumps(cfg).hex())
`

// TestConfigFlexPeer: ParseConfigFlex reads a config that another
// FlexBuffers encoder wrote (narrow widths, a long key).
func TestConfigFlexPeer(t *testing.T) {
	peertest.NeedPythonModules(t, "import flatbuffers.flexbuffers", "python3-flatbuffers")
	out, err := exec.Command(peertest.Python, "-c", flexPeer).Output()
	if err != nil {
		t.Fatalf("python3 flexbuffers: %v", err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseConfigFlex(b)
	if err != nil {
		t.Fatal(err)
	}
	long := "file:///d/" + strings.Repeat("x", 300) + "/"
	want := []Container{
		{Name: long, Prefix: long, Store: "local_file_system"},
		{Name: "https://example.com/", Prefix: "https://example.com/", Store: "http", AllowHTTP: true},
		{Name: "s3://bucket/data/", Prefix: "s3://bucket/data/", Store: "s3_compatible", Region: "us-east-1",
			Endpoint: "http://127.0.0.1:9000", Anonymous: true, AllowHTTP: true},
		{Name: "mem", Prefix: "memory://x/", Store: "in_memory"},
	}
	checkContainers(t, cs, want)
}

// checkContainers fails t unless got is want, in order.
func checkContainers(t *testing.T, got, want []Container) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d containers: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("container %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestRefreshContainers: Refresh (a --live mount's reopening) reads the
// virtual chunk containers again with the references, of both specs.
func TestRefreshContainers(t *testing.T) {
	for _, spec := range []int{1, 2} {
		tr := icechunktest.WriteWith(t, spec, false, icechunktest.Options{Containers: []icechunktest.Container{
			{Name: "a", Prefix: "s3://a/", Store: "s3", Settings: map[string]string{"region": "eu-west-1"}}}})
		st, _ := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
		ctx := context.Background()
		r, err := Open(ctx, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkContainers(t, r.Containers(), []Container{{Name: "a", Prefix: "s3://a/", Store: "s3", Region: "eu-west-1"}})
		tr.SetContainers([]icechunktest.Container{
			{Name: "a", Prefix: "s3://a/", Store: "s3", Settings: map[string]string{"region": "us-east-2"}},
			{Name: "b", Prefix: "s3://b/", Store: "s3_compatible", Settings: map[string]string{"endpoint_url": "http://127.0.0.1:9"}}})
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		checkContainers(t, r.Containers(), []Container{{Name: "a", Prefix: "s3://a/", Store: "s3", Region: "us-east-2"},
			{Name: "b", Prefix: "s3://b/", Store: "s3_compatible", Endpoint: "http://127.0.0.1:9"}})
		r.Close()
	}
}
