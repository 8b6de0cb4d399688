package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

func init() {
	Register(newLZMA,
		"lzma",
		"numcodecs.lzma",
		"https://purl.org/zarr/spec/codec/lzma/1.0", // zarr-python 2.13 (v3 draft of 2022)
	)
}

// Python's lzma module constants, as numcodecs' configuration uses them.
const (
	lzmaFormatAuto  = 0
	lzmaFormatXZ    = 1
	lzmaFormatAlone = 2
	lzmaFormatRaw   = 3

	lzmaFilterLZMA1 = 0x4000000000000001
	lzmaFilterLZMA2 = 0x21
)

// LZMA is numcodecs' LZMA codec. Supported: the xz container (format 1,
// any check, LZMA2 after a chain of delta and BCJ filters, as GDAL's LZMA
// codec writes it), the legacy .lzma "alone" format (format 2), automatic
// detection of those two when decoding (format 0), and raw streams
// (format 3) of LZMA2 or LZMA1 after such a chain. An xz stream names its
// own filters: decoding follows them, whatever the configuration says.
type LZMA struct {
	Format int
	Check  int // -1 default (CRC64), 0 none, 1 CRC32, 4 CRC64, 10 SHA256
	// Filter is the LZMA1 or LZMA2 filter that ends the chain of a raw
	// stream (or the LZMA2 filter of an xz stream), with its options.
	Filter LZMAFilter
	// pre are the filters before Filter, in encoding order.
	pre []preFilter
}

// LZMAFilter is one entry of numcodecs' "filters" list (Python's lzma
// filter specifiers).
type LZMAFilter struct {
	ID       uint64 `json:"id"`
	Preset   *int   `json:"preset"`
	DictSize int    `json:"dict_size"`
	LC       *int   `json:"lc"`
	LP       *int   `json:"lp"`
	PB       *int   `json:"pb"`
	// Dist is the delta filter's distance (default 1), StartOffset a BCJ
	// filter's start offset.
	Dist        int    `json:"dist"`
	StartOffset uint32 `json:"start_offset"`
}

func newLZMA(cfg Config) (Codec, error) {
	c := LZMA{Format: lzmaFormatXZ, Check: -1, Filter: LZMAFilter{ID: lzmaFilterLZMA2}}
	if _, err := cfg.Decode("lzma", "format", &c.Format); err != nil {
		return nil, err
	}
	if _, err := cfg.Decode("lzma", "check", &c.Check); err != nil {
		return nil, err
	}
	var preset *int
	if _, err := cfg.Decode("lzma", "preset", &preset); err != nil {
		return nil, err
	}
	var filters []LZMAFilter
	if _, err := cfg.Decode("lzma", "filters", &filters); err != nil {
		return nil, err
	}
	switch c.Format {
	case lzmaFormatAuto, lzmaFormatXZ, lzmaFormatAlone, lzmaFormatRaw:
	default:
		return nil, Unsupportedf("lzma format %d", c.Format)
	}
	switch c.Check {
	case -1, 0, 1, 4, 10:
	default:
		return nil, Unsupportedf("lzma check %d", c.Check)
	}
	switch {
	case len(filters) == 0 && c.Format == lzmaFormatRaw:
		return nil, fmt.Errorf("lzma: a raw stream (format 3) needs filters")
	case len(filters) > 4:
		return nil, fmt.Errorf("lzma: a chain of %d filters (at most 4)", len(filters))
	case len(filters) > 1 && c.Format == lzmaFormatAlone:
		return nil, fmt.Errorf("lzma: the alone format (2) takes one LZMA1 filter, not a chain of %d", len(filters))
	case len(filters) > 0:
		c.Filter = filters[len(filters)-1]
		if c.Filter.ID != lzmaFilterLZMA2 && !(c.Filter.ID == lzmaFilterLZMA1 && c.Format == lzmaFormatRaw) {
			return nil, Unsupportedf("lzma filter %#x ending a chain in format %d", c.Filter.ID, c.Format)
		}
		for _, f := range filters[:len(filters)-1] {
			dist := f.Dist
			if dist == 0 {
				dist = 1 // Python's default
			}
			p, err := newPreFilter(f.ID, dist, f.StartOffset)
			if err != nil {
				return nil, err
			}
			c.pre = append(c.pre, p)
		}
	}
	if c.Filter.Preset == nil {
		c.Filter.Preset = preset
	}
	if c.Filter.DictSize == 0 {
		c.Filter.DictSize = lzmaPresetDict(c.Filter.Preset)
	}
	if c.Filter.DictSize < 4096 || c.Filter.DictSize > 1<<30 {
		return nil, Unsupportedf("lzma dictionary size %d", c.Filter.DictSize)
	}
	if _, err := c.Filter.properties(); err != nil {
		return nil, err
	}
	return c, nil
}

// lzmaPresetDict returns liblzma's dictionary size for a preset (default 6).
func lzmaPresetDict(preset *int) int {
	p := 6
	if preset != nil {
		p = *preset & 0x1f // without the "extreme" flag
	}
	sizes := []int{256 << 10, 1 << 20, 2 << 20, 4 << 20, 4 << 20, 8 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20}
	if p < 0 || p >= len(sizes) {
		return 8 << 20
	}
	return sizes[p]
}

// properties returns the literal and position bits of an LZMA1 filter.
func (f LZMAFilter) properties() (lzma.Properties, error) {
	p := lzma.Properties{LC: 3, LP: 0, PB: 2}
	if f.LC != nil {
		p.LC = *f.LC
	}
	if f.LP != nil {
		p.LP = *f.LP
	}
	if f.PB != nil {
		p.PB = *f.PB
	}
	if p.LC < 0 || p.LC > 8 || p.LP < 0 || p.LP > 4 || p.PB < 0 || p.PB > 4 ||
		(f.ID == lzmaFilterLZMA2 && p.LC+p.LP > 4) {
		return p, fmt.Errorf("lzma: filter options lc %d, lp %d, pb %d out of range", p.LC, p.LP, p.PB)
	}
	return p, nil
}

// Name implements Codec.
func (LZMA) Name() string { return "lzma" }

// EncodedSize implements BytesToBytes.
func (LZMA) EncodedSize(int) int { return -1 }

// lzmaMaxOutput bounds what n bytes of an LZMA stream can decode to, and
// so the dictionary a stream of unknown decoded size can use (the decoder
// allocates the whole dictionary up front: a 23-byte stream claiming a
// 1 GiB dictionary would cost 1 GiB), at most UnknownSizeCap. The range
// coder spends at least -log2(1-31/2048) ≈ 0.022 bits on a decision and a
// match of at most 273 bytes takes a dozen decisions or more, so no stream
// expands by much more than 8000 times; 2^16 leaves a wide margin.
func lzmaMaxOutput(n int) int {
	return int(min(int64(UnknownSizeCap), int64(n)<<16+lzma.MinDictCap))
}

// dictCap returns a dictionary capacity for n bytes of data: the filter's
// size, but no more than the data needs.
func (c LZMA) dictCap(n int) int {
	return max(min(c.Filter.DictSize, n), lzma.MinDictCap)
}

// Encode implements BytesToBytes.
func (c LZMA) Encode(data []byte) ([]byte, error) {
	if c.Format == lzmaFormatXZ || c.Format == lzmaFormatAuto {
		checkID := byte(4) // CRC64, Python's default
		if c.Check >= 0 {
			checkID = byte(c.Check)
		}
		out, err := xzEncode(data, c.pre, c.dictCap(len(data)), checkID)
		if err != nil {
			return nil, fmt.Errorf("lzma: %w", err)
		}
		return out, nil
	}
	if len(c.pre) > 0 {
		data = bytes.Clone(data)
		for _, f := range c.pre {
			f.apply(data, true)
		}
	}
	var buf bytes.Buffer
	props, _ := c.Filter.properties() // checked by newLZMA
	var w io.WriteCloser
	var err error
	header := 0
	switch {
	case c.Format == lzmaFormatAlone:
		// Like liblzma: size unknown in the header, an end marker instead.
		w, err = lzma.WriterConfig{DictCap: c.dictCap(len(data)), EOSMarker: true}.NewWriter(&buf)
	case c.Filter.ID == lzmaFilterLZMA2:
		w, err = lzma.Writer2Config{DictCap: c.dictCap(len(data)), Properties: &props}.NewWriter2(&buf)
	default: // raw LZMA1: an alone stream with an end marker, without its header
		w, err = lzma.WriterConfig{DictCap: c.dictCap(len(data)), Properties: &props, EOSMarker: true}.NewWriter(&buf)
		header = lzma.HeaderLen
	}
	if err != nil {
		return nil, fmt.Errorf("lzma: %w", err)
	}
	if err := writeAll("lzma", w, data); err != nil {
		return nil, err
	}
	return buf.Bytes()[header:], nil
}

// Decode implements BytesToBytes. No dictionary larger than the decoded
// size is allocated, whatever the headers claim, and an xz stream whose
// index records another size fails before decoding.
func (c LZMA) Decode(data []byte, decodedSize int) ([]byte, error) {
	if c.Format == lzmaFormatXZ || (c.Format == lzmaFormatAuto && bytes.HasPrefix(data, xzMagic)) {
		return xzDecode(data, decodedSize)
	}
	limit := decodedSize
	if limit < 0 {
		limit = lzmaMaxOutput(len(data))
	}
	var r io.Reader
	var err error
	switch {
	case c.Format == lzmaFormatAlone || c.Format == lzmaFormatAuto:
		data, err = aloneLimitDict(data, decodedSize)
		if err != nil {
			return nil, err
		}
		r, err = lzma.NewReader(bytes.NewReader(data))
	case c.Filter.ID == lzmaFilterLZMA2:
		br := bytes.NewReader(data)
		r, err = lzma.Reader2Config{DictCap: c.dictCap(limit)}.NewReader2(br)
		if err == nil {
			r = &trailingCheck{r: r, rest: br}
		}
	default: // raw LZMA1: give it the alone header it lacks
		props, _ := c.Filter.properties()
		h := make([]byte, lzma.HeaderLen)
		h[0] = props.Code()
		binary.LittleEndian.PutUint32(h[1:], uint32(c.dictCap(limit)))
		binary.LittleEndian.PutUint64(h[5:], ^uint64(0)) // size unknown: end marker
		r, err = lzma.NewReader(io.MultiReader(bytes.NewReader(h), bytes.NewReader(data)))
	}
	if err != nil {
		return nil, Corruptf("lzma", "%w", err)
	}
	out, err := readExact(r, "lzma", decodedSize)
	if err != nil {
		return nil, err
	}
	if c.Format == lzmaFormatRaw {
		for i := len(c.pre) - 1; i >= 0; i-- {
			c.pre[i].apply(out, false)
		}
	}
	return out, nil
}

// trailingCheck reports bytes left in rest after r ends as corruption.
type trailingCheck struct {
	r    io.Reader
	rest *bytes.Reader
}

func (t *trailingCheck) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err == io.EOF && t.rest.Len() > 0 {
		err = fmt.Errorf("%d bytes after the end of the stream", t.rest.Len())
	}
	return n, err
}

var xzMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0}

// aloneLimitDict checks the header of a .lzma stream against the size
// wanted (when known) and returns the stream with its dictionary size
// lowered to what that many bytes can use.
func aloneLimitDict(data []byte, decodedSize int) ([]byte, error) {
	if len(data) < lzma.HeaderLen {
		return nil, Corruptf("lzma", "%d bytes, too short for a header", len(data))
	}
	size := binary.LittleEndian.Uint64(data[5:])
	if size != ^uint64(0) && decodedSize >= 0 && size != uint64(decodedSize) {
		return nil, Corruptf("lzma", "header says %d bytes, want %d", size, decodedSize)
	}
	limit := uint64(lzmaMaxOutput(len(data)))
	if decodedSize >= 0 {
		limit = uint64(max(decodedSize, lzma.MinDictCap))
	}
	if dict := binary.LittleEndian.Uint32(data[1:]); uint64(dict) > limit {
		data = bytes.Clone(data)
		binary.LittleEndian.PutUint32(data[1:], uint32(limit))
	}
	return data, nil
}

// uvarint reads an xz variable-length integer (at most 9 bytes).
func uvarint(p []byte) (uint64, []byte, error) {
	var v uint64
	for i := 0; i < 9 && i < len(p); i++ {
		v |= uint64(p[i]&0x7f) << (7 * i)
		if p[i]&0x80 == 0 {
			if i > 0 && p[i] == 0 {
				return 0, nil, fmt.Errorf("non-minimal integer")
			}
			return v, p[i+1:], nil
		}
	}
	return 0, nil, fmt.Errorf("truncated integer")
}
