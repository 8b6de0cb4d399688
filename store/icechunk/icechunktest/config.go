package icechunktest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Options changes what WriteWith writes.
type Options struct {
	// VirtualURL is the location recorded for snapshot s3's virtual chunk
	// (default: file:// of Repo.VirtualFile); the caller puts the file's
	// bytes there.
	VirtualURL string
	// Containers are written as the virtual_chunk_containers of a spec 1
	// repository's config.yaml, or of a spec 2 repository's config in
	// its repo info (flex.go); none: no config.
	Containers []Container
}

// Container is a virtual chunk container as Icechunk's config.yaml holds
// it (icechunk/src/config.rs RepositoryConfig, virtual_chunks.rs
// VirtualChunkContainer, serialized by serde_yaml as the project's
// icechunk-python/tests/data/test-repo-v1/config.yaml shows): a map entry
// by name with name, url_prefix and a store tagged with its
// ObjectStoreConfig variant (s3, s3_compatible, tigris, http,
// local_file_system, gcs, azure).
type Container struct {
	Name, Prefix, Store string
	// Settings are the store's fields (region, endpoint_url, anonymous,
	// allow_http, force_path_style) as YAML scalars; nil: `{}`.
	Settings map[string]string
}

// config writes config.yaml with containers (spec 1), or keeps them for
// the repo info's config (spec 2).
func (w *testWriter) config(cs []Container) {
	if len(cs) == 0 {
		return
	}
	if w.spec != 1 {
		w.flexConfig = flexConfig(cs) // in the repo info (refs.go)
		return
	}
	var b strings.Builder
	b.WriteString("inline_chunk_threshold_bytes: 12\nget_partial_values_concurrency: null\ncompression: null\ncaching: null\nstorage: null\n")
	b.WriteString("virtual_chunk_containers:\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "  %s:\n    name: %s\n    url_prefix: %s\n    store: !%s", c.Name, c.Name, c.Prefix, c.Store)
		if len(c.Settings) == 0 {
			b.WriteString(" {}\n")
			continue
		}
		b.WriteString("\n")
		keys := make([]string, 0, len(c.Settings))
		for k := range c.Settings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "      %s: %s\n", k, c.Settings[k])
		}
	}
	b.WriteString("manifest: null\n")
	if err := os.WriteFile(filepath.Join(w.dir, "config.yaml"), []byte(b.String()), 0o644); err != nil {
		w.t.Fatal(err)
	}
}
