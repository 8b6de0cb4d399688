package icechunk

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Virtual chunk containers (spec 1: config.yaml's virtual_chunk_containers,
// a map of name to {name, url_prefix, store}; the store a YAML-tagged
// ObjectStoreConfig such as `!s3 {region, endpoint_url, anonymous,
// allow_http, force_path_style}`, `!http {...}` or `!local_file_system
// PATH`) say where the chunks a repository's virtual references point
// to live and how to reach them. A virtual chunk's URL is read through
// the container with the longest url_prefix it starts with; when the
// repository lists containers, a URL that matches none is refused, as
// Icechunk refuses it. Credentials are never in the repository: they
// come from the reader's environment, as for any store.
//
// Spec 2 keeps the configuration in the repo info file's config field,
// serde's FlexBuffers of the same RepositoryConfig (ParseConfigFlex):
// structs and maps as FlexBuffers maps, the store's enum as a map of its
// variant's name to its settings (a unit variant: the name as a string),
// None as null. A spec 2 repository whose repo info has no config, as a
// spec 1 repository without config.yaml, lists no containers: its
// virtual chunks are read with the reader's own settings.

// Container is one virtual chunk container.
type Container struct {
	Name   string
	Prefix string // url_prefix: "s3://bucket/dir/", "https://host/", "file:///dir/"
	// Store is the ObjectStoreConfig variant: s3, s3_compatible, tigris,
	// http, local_file_system, gcs, azure, in_memory.
	Store          string
	Region         string
	Endpoint       string // endpoint_url; "": the reader's default
	Anonymous      bool
	AllowHTTP      bool
	ForcePathStyle bool
}

// maxConfig bounds the config.yaml read.
const maxConfig = 1 << 20

// ParseConfigYAML returns the virtual chunk containers of a spec 1
// repository's config.yaml, sorted by prefix, longest first.
func ParseConfigYAML(data []byte) ([]Container, error) {
	if len(data) > maxConfig {
		return nil, corruptf("config.yaml over %d bytes", maxConfig)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, corruptf("config.yaml: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	vcc := mapValue(doc.Content[0], "virtual_chunk_containers")
	if vcc == nil || vcc.Kind != yaml.MappingNode {
		return nil, nil // none, or null
	}
	var out []Container
	for i := 0; i+1 < len(vcc.Content); i += 2 {
		key, n := vcc.Content[i].Value, vcc.Content[i+1]
		if n.Kind != yaml.MappingNode {
			return nil, corruptf("config.yaml: virtual chunk container %q is not a map", key)
		}
		c := Container{Name: key}
		if v := mapValue(n, "name"); v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
			c.Name = v.Value
		}
		p := mapValue(n, "url_prefix")
		if p == nil || p.Kind != yaml.ScalarNode || p.Value == "" {
			return nil, corruptf("config.yaml: virtual chunk container %q has no url_prefix", key)
		}
		c.Prefix = p.Value
		s := mapValue(n, "store")
		if s == nil || !strings.HasPrefix(s.Tag, "!") || strings.HasPrefix(s.Tag, "!!") {
			return nil, corruptf("config.yaml: virtual chunk container %q has no tagged store", key)
		}
		c.Store = s.Tag[1:]
		if s.Kind == yaml.MappingNode {
			c.Region = scalar(mapValue(s, "region"))
			c.Endpoint = scalar(mapValue(s, "endpoint_url"))
			c.Anonymous = scalar(mapValue(s, "anonymous")) == "true"
			c.AllowHTTP = scalar(mapValue(s, "allow_http")) == "true"
			c.ForcePathStyle = scalar(mapValue(s, "force_path_style")) == "true"
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Prefix) > len(out[j].Prefix) })
	return out, nil
}

// ParseConfigFlex returns the virtual chunk containers of a spec 2
// repository's configuration (the repo info's config field), sorted by
// prefix, longest first.
func ParseConfigFlex(b []byte) ([]Container, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) > maxConfig {
		return nil, corruptf("config over %d bytes", maxConfig)
	}
	var out []Container
	var bad error
	err := parse("repo info config (FlexBuffers)", func() {
		vcc, ok := flexRoot(b).get("virtual_chunk_containers")
		if !ok || vcc.typ == flexNull {
			return
		}
		if !vcc.each(func(key string, n flexRef) {
			c := Container{Name: key}
			if v, ok := n.get("name"); ok {
				if name, ok := v.str(); ok {
					c.Name = name
				}
			}
			p, _ := n.get("url_prefix")
			c.Prefix, _ = p.str()
			st, _ := n.get("store")
			if c.Store, ok = st.str(); !ok {
				st.each(func(kind string, set flexRef) {
					c.Store = kind
					str := func(k string) string { v, _ := set.get(k); s, _ := v.str(); return s }
					flag := func(k string) bool { v, _ := set.get(k); s, _ := v.str(); return v.boolean() || s == "true" }
					c.Region, c.Endpoint = str("region"), str("endpoint_url")
					c.Anonymous, c.AllowHTTP, c.ForcePathStyle = flag("anonymous"), flag("allow_http"), flag("force_path_style")
				})
			}
			switch {
			case bad != nil:
			case c.Prefix == "":
				bad = corruptf("config: virtual chunk container %q has no url_prefix", key)
			case c.Store == "":
				bad = corruptf("config: virtual chunk container %q has no store", key)
			}
			out = append(out, c)
		}) {
			bad = corruptf("config: virtual_chunk_containers is not a map")
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Prefix) > len(out[j].Prefix) })
	return out, nil
}

// mapValue returns the value of key in mapping node n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalar is a scalar node's value ("" for null, absent or not a scalar).
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// storesFor lists the container stores that read each URL scheme.
var storesFor = map[string][]string{
	"s3":    {"s3", "s3_compatible", "tigris"},
	"http":  {"http"},
	"https": {"http"},
	"file":  {"local_file_system"},
}

// container returns the container that reads the virtual chunk URL loc
// (scheme lower-cased): nil when the repository lists none; an error
// matching ErrRefused when it lists some and none matches, or the one
// that matches is of a kind zarrfs does not read.
func container(cs []Container, scheme, loc string) (*Container, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	for i := range cs {
		c := &cs[i]
		if !strings.HasPrefix(loc, c.Prefix) {
			continue
		}
		ok := false
		for _, s := range storesFor[scheme] {
			ok = ok || c.Store == s
		}
		if !ok {
			return nil, fmt.Errorf("%w: virtual chunk container %q (%s) is a %s store, which zarrfs does not read for %s:// URLs",
				ErrRefused, c.Name, c.Prefix, c.Store, scheme)
		}
		if c.Endpoint != "" && strings.HasPrefix(strings.ToLower(c.Endpoint), "http://") && !c.AllowHTTP {
			return nil, fmt.Errorf("%w: virtual chunk container %q has an http:// endpoint without allow_http", ErrRefused, c.Name)
		}
		return c, nil
	}
	prefixes := make([]string, len(cs))
	for i, c := range cs {
		prefixes[i] = c.Prefix
	}
	sort.Strings(prefixes)
	return nil, fmt.Errorf("%w: the URL matches none of the repository's virtual chunk containers (%s)",
		ErrRefused, strings.Join(prefixes, ", "))
}
