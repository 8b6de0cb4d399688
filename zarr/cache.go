package zarr

// chunkCache is the decoded-chunk cache.
type chunkCache struct{}
