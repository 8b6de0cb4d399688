package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/ulikunitz/xz"
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
// any check, one LZMA2 filter), the legacy .lzma "alone" format (format 2),
// automatic detection of those two when decoding (format 0), and raw
// streams (format 3) with a single LZMA2 or LZMA1 filter. Filter chains
// with delta or branch-call-jump filters are unsupported.
type LZMA struct {
	Format int
	Check  int // -1 default (CRC64), 0 none, 1 CRC32, 4 CRC64, 10 SHA256
	// Filter is the single LZMA1 or LZMA2 filter of a raw stream (or the
	// LZMA2 filter of an xz stream), with its options.
	Filter LZMAFilter
}

// LZMAFilter is one entry of numcodecs' "filters" list.
type LZMAFilter struct {
	ID       uint64 `json:"id"`
	Preset   *int   `json:"preset"`
	DictSize int    `json:"dict_size"`
	LC       *int   `json:"lc"`
	LP       *int   `json:"lp"`
	PB       *int   `json:"pb"`
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
	case len(filters) > 1:
		return nil, Unsupportedf("lzma filter chain of %d filters", len(filters))
	case len(filters) == 1:
		c.Filter = filters[0]
		if c.Filter.ID != lzmaFilterLZMA2 && !(c.Filter.ID == lzmaFilterLZMA1 && c.Format == lzmaFormatRaw) {
			return nil, Unsupportedf("lzma filter %#x in format %d", c.Filter.ID, c.Format)
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

// dictCap returns a dictionary capacity for n bytes of data: the filter's
// size, but no more than the data needs.
// lzmaMaxOutput bounds what n bytes of an LZMA stream can decode to, and
// so the dictionary a stream of unknown decoded size can use (the decoder
// allocates the whole dictionary up front: a 23-byte stream claiming a
// 1 GiB dictionary would cost 1 GiB). The range coder spends at least
// -log2(1-31/2048) ≈ 0.022 bits on a decision and a match of at most 273
// bytes takes a dozen decisions or more, so no stream expands by much
// more than 8000 times; 2^16 leaves a wide margin.
func lzmaMaxOutput(n int) int {
	return int(min(int64(MaxUnknownSize), int64(n)<<16+lzma.MinDictCap))
}

func (c LZMA) dictCap(n int) int {
	return max(min(c.Filter.DictSize, n), lzma.MinDictCap)
}

// Encode implements BytesToBytes.
func (c LZMA) Encode(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	props, _ := c.Filter.properties() // checked by newLZMA
	var w io.WriteCloser
	var err error
	header := 0
	switch {
	case c.Format == lzmaFormatXZ || c.Format == lzmaFormatAuto:
		cfg := xz.WriterConfig{DictCap: c.dictCap(len(data)), CheckSum: xz.CRC64}
		switch c.Check {
		case 0:
			cfg.NoCheckSum = true
		case 1:
			cfg.CheckSum = xz.CRC32
		case 10:
			cfg.CheckSum = xz.SHA256
		}
		w, err = cfg.NewWriter(&buf)
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
	if _, err := w.Write(data); err != nil {
		return nil, fmt.Errorf("lzma: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("lzma: %w", err)
	}
	return buf.Bytes()[header:], nil
}

// Decode implements BytesToBytes. No dictionary larger than the decoded
// size is allocated, whatever the headers claim, and an xz stream whose
// index records another size fails before decoding.
func (c LZMA) Decode(data []byte, decodedSize int) ([]byte, error) {
	limit := decodedSize
	if limit < 0 {
		limit = lzmaMaxOutput(len(data))
	}
	var r io.Reader
	var err error
	switch {
	case c.Format == lzmaFormatXZ || (c.Format == lzmaFormatAuto && bytes.HasPrefix(data, xzMagic)):
		data, err = xzLimitDicts(data, decodedSize)
		if err != nil {
			return nil, err
		}
		r, err = xz.ReaderConfig{SingleStream: true}.NewReader(bytes.NewReader(data))
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
		return nil, Corruptf("lzma", "%v", err)
	}
	return readExact(r, "lzma", decodedSize)
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

// xzLimitDicts checks the structure of a single xz stream (footer, index,
// block headers), checks the uncompressed sizes the index records against
// the size wanted, and returns the stream with the LZMA2 dictionary size of
// each block lowered to what the block's data can use (headers re-summed).
// Stream padding (zero bytes) may follow the stream.
func xzLimitDicts(data []byte, decodedSize int) ([]byte, error) {
	bad := func(format string, args ...any) error { return Corruptf("lzma", "xz: "+format, args...) }
	end := len(data)
	for end >= 4 && end%4 == 0 && bytes.Equal(data[end-4:end], []byte{0, 0, 0, 0}) {
		end -= 4
	}
	if end < 24 || !bytes.HasPrefix(data, xzMagic) {
		return nil, bad("no stream header")
	}
	footer := data[end-12 : end]
	if string(footer[10:]) != "YZ" || crc32.ChecksumIEEE(footer[4:10]) != binary.LittleEndian.Uint32(footer) {
		return nil, bad("bad stream footer")
	}
	indexSize := (int64(binary.LittleEndian.Uint32(footer[4:])) + 1) * 4
	indexStart := int64(end-12) - indexSize
	if indexStart < 12 {
		return nil, bad("index size %d does not fit", indexSize)
	}
	index := data[indexStart : end-12]
	if index[0] != 0 || crc32.ChecksumIEEE(index[:len(index)-4]) != binary.LittleEndian.Uint32(index[len(index)-4:]) {
		return nil, bad("bad index")
	}
	p := index[1 : len(index)-4]
	count, p, err := uvarint(p)
	if err != nil || count > uint64(len(p)) {
		return nil, bad("bad index record count")
	}
	type block struct{ unpadded, size uint64 }
	blocks := make([]block, count)
	var total uint64
	for i := range blocks {
		if blocks[i].unpadded, p, err = uvarint(p); err != nil {
			return nil, bad("index: %v", err)
		}
		if blocks[i].size, p, err = uvarint(p); err != nil {
			return nil, bad("index: %v", err)
		}
		total += blocks[i].size
		if total > MaxUnknownSize || blocks[i].size > MaxUnknownSize {
			return nil, bad("index records more than %d bytes", MaxUnknownSize)
		}
	}
	if decodedSize >= 0 && total != uint64(decodedSize) {
		return nil, bad("index records %d bytes, want %d", total, decodedSize)
	}
	out := bytes.Clone(data)
	pos := int64(12)
	for i, b := range blocks {
		padded := (b.unpadded + 3) &^ 3
		if padded > uint64(indexStart-pos) {
			return nil, bad("block %d does not fit before the index", i)
		}
		if err := limitBlockDict(out[pos:pos+int64(padded)], b.size); err != nil {
			return nil, bad("block %d: %v", i, err)
		}
		pos += int64(padded)
	}
	if pos != indexStart {
		return nil, bad("%d bytes between the blocks and the index", indexStart-pos)
	}
	return out, nil
}

// limitBlockDict lowers the dictionary size of the LZMA2 filter in the
// header of the xz block b to the smallest that holds size bytes, and
// updates the header's CRC32.
func limitBlockDict(b []byte, size uint64) error {
	if len(b) == 0 || b[0] == 0 {
		return fmt.Errorf("no block header")
	}
	hlen := (int(b[0]) + 1) * 4
	if hlen > len(b) {
		return fmt.Errorf("header of %d bytes does not fit", hlen)
	}
	h := b[:hlen]
	if crc32.ChecksumIEEE(h[:hlen-4]) != binary.LittleEndian.Uint32(h[hlen-4:]) {
		return fmt.Errorf("bad header checksum")
	}
	flags := h[1]
	p := h[2 : hlen-4]
	var err error
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} {
		if present {
			if _, p, err = uvarint(p); err != nil {
				return err
			}
		}
	}
	for f := 0; f <= int(flags&3); f++ {
		var id, n uint64
		if id, p, err = uvarint(p); err != nil {
			return err
		}
		if n, p, err = uvarint(p); err != nil {
			return err
		}
		if n > uint64(len(p)) {
			return fmt.Errorf("filter properties do not fit")
		}
		if id == lzmaFilterLZMA2 && n == 1 {
			prop := p[0] & 0x3f
			for q := byte(0); q < prop; q++ {
				if uint64(2|q&1)<<(q/2+11) >= size {
					p[0] = q
					break
				}
			}
		}
		p = p[n:]
	}
	binary.LittleEndian.PutUint32(h[hlen-4:], crc32.ChecksumIEEE(h[:hlen-4]))
	return nil
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
