package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
)

func init() {
	Register(newSharding, "sharding_indexed")
}

// shardingName is the v3 name of the sharding codec, used in messages.
const shardingName = "sharding_indexed"

// shardMissing marks an absent inner chunk in a shard index: offset and
// nbytes are both 2^64−1.
const shardMissing = math.MaxUint64

// IndexLocation says where a shard's index is stored.
type IndexLocation int

const (
	// IndexAtEnd places the index after the inner chunks (the default).
	IndexAtEnd IndexLocation = iota
	// IndexAtStart places the index before the inner chunks.
	IndexAtStart
)

// String returns the configuration value of l ("start" or "end").
func (l IndexLocation) String() string {
	if l == IndexAtStart {
		return "start"
	}
	return "end"
}

// Sharding is the array→bytes codec "sharding_indexed" (Zarr v3 sharding
// codec, ZEP 2): a chunk of the array (a shard) is split into inner chunks
// of ChunkShape, each encoded with the inner codecs, stored one after
// another, and located by an index of (offset, nbytes) pairs, uint64 each,
// one pair per inner chunk in C order, encoded with the index codecs and
// placed at the start or at the end of the shard. Inner chunks whose pair
// is (2^64−1, 2^64−1) are absent and read as the fill value.
//
// The decoded form of a shard is always the whole shard shape, also for
// shards that overhang the edge of the array: the caller crops.
//
// Whole shards decode with Pipeline.Decode of the stored value (one Get,
// no range requests). Parts of a shard decode with DecodeParts (the
// PartialDecoder): the shard's index, read with one range read (a suffix
// read when it is at the end) and kept by the RangeReader when it is a
// Memo, then only the inner chunks the parts need, neighbouring ones
// coalesced into one range read; with nested sharding, an inner shard
// the parts cover in part is itself read by its index and the chunks
// needed. A shard that does not exist is the RangeReader's error, which
// matches fs.ErrNotExist; a shard that holds no inner chunk is all fill
// value and needs no further read.
//
// The sharding storage transformer of the 2022 v3 draft stores shards in
// the same binary format with the index at the end, uint64 little-endian
// without checksum: NewSharding(chunkShape, arrayCodecs, indexCodecs,
// IndexAtEnd), indexCodecs being the "bytes" codec alone, decodes them,
// the shard shape being the chunk shape times chunks_per_shard.
type Sharding struct {
	chunkShape []int
	inner      []Codec
	index      []Codec
	location   IndexLocation

	mu      sync.Mutex
	layouts map[string]*shardLayout // by decoded spec; at most maxShardLayouts
}

// maxShardLayouts bounds the layouts a Sharding codec remembers. An array
// has one shard shape, so one entry is the common case.
const maxShardLayouts = 8

// NewSharding returns the sharding codec for inner chunks of chunkShape
// encoded with inner, an index encoded with index (whose encoded size must
// not depend on the data) and placed at location. The codec lists are
// checked against a shard's spec when the first shard is decoded.
func NewSharding(chunkShape []int, inner, index []Codec, location IndexLocation) (*Sharding, error) {
	for i, n := range chunkShape {
		if n <= 0 {
			return nil, fmt.Errorf("%s: chunk_shape[%d] = %d is not positive", shardingName, i, n)
		}
	}
	if len(inner) == 0 {
		return nil, fmt.Errorf("%s: codecs is empty", shardingName)
	}
	if len(index) == 0 {
		return nil, fmt.Errorf("%s: index_codecs is empty", shardingName)
	}
	if location != IndexAtStart && location != IndexAtEnd {
		return nil, fmt.Errorf("%s: invalid index location %d", shardingName, location)
	}
	return &Sharding{
		chunkShape: slices.Clone(chunkShape),
		inner:      slices.Clone(inner),
		index:      slices.Clone(index),
		location:   location,
		layouts:    map[string]*shardLayout{},
	}, nil
}

// newSharding builds the codec from its v3 configuration. As in
// zarr-python, codecs defaults to [bytes] and index_codecs to
// [bytes, crc32c] when absent; index_location defaults to "end".
func newSharding(cfg Config) (Codec, error) {
	for k := range cfg {
		switch k {
		case "chunk_shape", "codecs", "index_codecs", "index_location":
		default:
			return nil, Unsupportedf("%s configuration member %q", shardingName, k)
		}
	}
	var chunkShape []int
	if ok, err := cfg.Decode(shardingName, "chunk_shape", &chunkShape); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%s: configuration has no chunk_shape", shardingName)
	}
	inner, err := shardCodecs(cfg, "codecs", `["bytes"]`)
	if err != nil {
		return nil, err
	}
	index, err := shardCodecs(cfg, "index_codecs", `["bytes", "crc32c"]`)
	if err != nil {
		return nil, err
	}
	location := IndexAtEnd
	var loc string
	if _, err := cfg.Decode(shardingName, "index_location", &loc); err != nil {
		return nil, err
	}
	switch loc {
	case "", "end":
	case "start":
		location = IndexAtStart
	default:
		return nil, fmt.Errorf("%s: index_location %q is neither \"start\" nor \"end\"", shardingName, loc)
	}
	return NewSharding(chunkShape, inner, index, location)
}

// shardCodecs builds the codec list of member key of cfg, or def (a JSON
// codec list) when it is absent.
func shardCodecs(cfg Config, key, def string) ([]Codec, error) {
	raw, ok := cfg[key]
	if !ok || string(raw) == "null" {
		raw = json.RawMessage(def)
	}
	cs, err := ParseCodecList(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", shardingName, key, err)
	}
	return cs, nil
}

// Name implements Codec.
func (*Sharding) Name() string { return shardingName }

// EncodedSize implements ArrayToBytes: the size of a shard depends on its
// data (inner chunks of fill value are left out).
func (*Sharding) EncodedSize(ArraySpec) int { return -1 }
