package zarr

// Prefetched returns the bytes of the root document key (".zmetadata",
// "zarr.json" …) as Open read them, without a request; ok is false when
// Open did not read it or the store does not hold it. A large .zmetadata
// of a directory is not kept (storedConsolidated): doc is then nil. The
// CLI looks in a remote store's .zmetadata for a Kerchunk reference
// directory this way.
func (h *Hierarchy) Prefetched(key string) (doc []byte, ok bool) {
	doc, ok = h.prefetched[key]
	return doc, ok
}
