package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// The xz container (https://tukaani.org/xz/xz-file-format.txt), read and
// written here around package lzma's LZMA2 coder, so that blocks may chain
// filters before LZMA2 (GDAL's LZMA codec writes delta + LZMA2), which
// package xz does not read. Decoding never allocates more than the
// decoded size, whatever the headers claim: each block's LZMA2 dictionary
// is capped at the block's size, which the index records.

var crc64Table = crc64.MakeTable(crc64.ECMA)

// xzCheckSize returns the size of the check of an xz check ID.
func xzCheckSize(id byte) int {
	if id == 0 {
		return 0
	}
	return 4 << ((id - 1) / 3)
}

// xzCheck returns the check of data under a check ID, as a block stores
// it, or nil for none and for IDs liblzma cannot verify either (which it
// decodes without checking).
func xzCheck(id byte, data []byte) []byte {
	var h hash.Hash
	switch id {
	case 1:
		h = crc32.NewIEEE()
	case 4:
		h = crc64.New(crc64Table)
	case 10:
		h = sha256.New()
	default:
		return nil
	}
	h.Write(data)
	sum := h.Sum(nil)
	if id != 10 {
		// CRC32 and CRC64 are stored little-endian.
		for l, r := 0, len(sum)-1; l < r; l, r = l+1, r-1 {
			sum[l], sum[r] = sum[r], sum[l]
		}
	}
	return sum
}

// xzBlock is one block of an xz stream.
type xzBlock struct {
	filters []preFilter // before LZMA2, in encoding order
	dict    int         // the LZMA2 dictionary size
	data    []byte      // the LZMA2 data
	check   []byte
	size    int // the decoded size, from the index
}

// xzDecode decodes one xz stream (stream padding may follow) that must
// decode to decodedSize bytes (-1: unknown, as many as its index records,
// within what len(data) bytes can hold).
func xzDecode(data []byte, decodedSize int) ([]byte, error) {
	limit := decodedSize
	if limit < 0 {
		limit = lzmaMaxOutput(len(data))
	}
	checkID, blocks, err := xzParse(data, limit)
	if err != nil {
		return nil, Corruptf("lzma", "xz: %w", err)
	}
	total := 0
	for _, b := range blocks {
		total += b.size // each at most limit, and so their number
	}
	switch {
	case decodedSize >= 0 && total != decodedSize:
		return nil, Corruptf("lzma", "xz: index records %d bytes, want %d", total, decodedSize)
	case decodedSize < 0 && total > lzmaMaxOutput(len(data)):
		return nil, Corruptf("lzma", "xz: index records %d bytes, more than %d bytes of data can hold", total, len(data))
	}
	out := make([]byte, total)
	pos := 0
	for i, b := range blocks {
		if err := b.decode(out[pos:pos+b.size], checkID); err != nil {
			if errors.Is(err, ErrUnsupported) {
				return nil, err
			}
			return nil, Corruptf("lzma", "xz: block %d: %w", i, err)
		}
		pos += b.size
	}
	return out, nil
}

// decode decodes the block into dst, of the size the index records.
func (b xzBlock) decode(dst []byte, checkID byte) error {
	src := bytes.NewReader(b.data)
	r, err := lzma.Reader2Config{DictCap: max(min(b.dict, len(dst)), lzma.MinDictCap)}.NewReader2(src)
	if err != nil {
		return err
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		return fmt.Errorf("LZMA2: %v", err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		return fmt.Errorf("LZMA2 data longer than the %d bytes the index records", len(dst))
	}
	if src.Len() != 0 {
		return fmt.Errorf("%d bytes after the LZMA2 data", src.Len())
	}
	for i := len(b.filters) - 1; i >= 0; i-- {
		b.filters[i].apply(dst, false)
	}
	if sum := xzCheck(checkID, dst); sum != nil && !bytes.Equal(sum, b.check) {
		return fmt.Errorf("check mismatch")
	}
	return nil
}

// xzParse checks the structure of one xz stream (header, footer, index,
// block headers), no block recording more than limit bytes, and returns its
// check ID and blocks.
func xzParse(data []byte, limit int) (byte, []xzBlock, error) {
	end := len(data)
	for end >= 4 && end%4 == 0 && bytes.Equal(data[end-4:end], []byte{0, 0, 0, 0}) {
		end -= 4
	}
	if end < 24 || !bytes.HasPrefix(data, xzMagic) {
		return 0, nil, fmt.Errorf("no stream header")
	}
	flags := data[6:8]
	if flags[0] != 0 || flags[1]&0xf0 != 0 || crc32.ChecksumIEEE(flags) != binary.LittleEndian.Uint32(data[8:]) {
		return 0, nil, fmt.Errorf("bad stream header")
	}
	checkID := flags[1]
	footer := data[end-12 : end]
	if string(footer[10:]) != "YZ" || !bytes.Equal(footer[8:10], flags) || crc32.ChecksumIEEE(footer[4:10]) != binary.LittleEndian.Uint32(footer) {
		return 0, nil, fmt.Errorf("bad stream footer")
	}
	indexSize := (int64(binary.LittleEndian.Uint32(footer[4:])) + 1) * 4
	indexStart := int64(end-12) - indexSize
	if indexStart < 12 {
		return 0, nil, fmt.Errorf("index size %d does not fit", indexSize)
	}
	index := data[indexStart : end-12]
	if index[0] != 0 || crc32.ChecksumIEEE(index[:len(index)-4]) != binary.LittleEndian.Uint32(index[len(index)-4:]) {
		return 0, nil, fmt.Errorf("bad index")
	}
	p := index[1 : len(index)-4]
	count, p, err := uvarint(p)
	if err != nil || count > uint64(len(p)) {
		return 0, nil, fmt.Errorf("bad index record count")
	}
	blocks := make([]xzBlock, count)
	checkSize := int64(xzCheckSize(checkID))
	pos := int64(12)
	for i := range blocks {
		var unpadded, size uint64
		if unpadded, p, err = uvarint(p); err != nil {
			return 0, nil, fmt.Errorf("index: %v", err)
		}
		if size, p, err = uvarint(p); err != nil {
			return 0, nil, fmt.Errorf("index: %v", err)
		}
		if size > uint64(limit) {
			return 0, nil, fmt.Errorf("block %d records %d bytes, more than %d", i, size, limit)
		}
		if unpadded > uint64(indexStart-pos) {
			return 0, nil, fmt.Errorf("block %d does not fit before the index", i)
		}
		padded := int64(unpadded+3) &^ 3
		if padded > indexStart-pos {
			return 0, nil, fmt.Errorf("block %d does not fit before the index", i)
		}
		if blocks[i], err = xzParseBlock(data[pos:pos+padded], int64(unpadded), checkSize, size); err != nil {
			return 0, nil, fmt.Errorf("block %d: %v", i, err)
		}
		pos += padded
	}
	if len(p) > 3 || bytes.Count(p, []byte{0}) != len(p) {
		return 0, nil, fmt.Errorf("bad index padding")
	}
	if pos != indexStart {
		return 0, nil, fmt.Errorf("%d bytes between the blocks and the index", indexStart-pos)
	}
	// Every block holds a byte of data at least, so that a stream's
	// blocks are no more than its bytes.
	return checkID, blocks, nil
}

// xzParseBlock reads a block b (header, LZMA2 data, padding, check) of
// the given unpadded size (all but the padding).
func xzParseBlock(b []byte, unpadded, checkSize int64, size uint64) (xzBlock, error) {
	if len(b) == 0 || b[0] == 0 {
		return xzBlock{}, fmt.Errorf("no block header")
	}
	hlen := (int64(b[0]) + 1) * 4
	if hlen+checkSize >= unpadded {
		return xzBlock{}, fmt.Errorf("header of %d bytes and check of %d leave no data in %d bytes", hlen, checkSize, unpadded)
	}
	h := b[:hlen]
	if crc32.ChecksumIEEE(h[:hlen-4]) != binary.LittleEndian.Uint32(h[hlen-4:]) {
		return xzBlock{}, fmt.Errorf("bad header checksum")
	}
	dataEnd := unpadded - checkSize
	blk := xzBlock{
		data:  b[hlen:dataEnd],
		check: b[int64(len(b))-checkSize:],
		size:  int(size),
	}
	for _, c := range b[dataEnd : int64(len(b))-checkSize] {
		if c != 0 {
			return xzBlock{}, fmt.Errorf("padding is not zero")
		}
	}
	flags := h[1]
	if flags&0x3c != 0 {
		return xzBlock{}, fmt.Errorf("reserved header flags %#x", flags)
	}
	p := h[2 : hlen-4]
	var err error
	for _, f := range []struct {
		present bool
		want    uint64
		what    string
	}{{flags&0x40 != 0, uint64(len(blk.data)), "compressed"}, {flags&0x80 != 0, size, "uncompressed"}} {
		if !f.present {
			continue
		}
		var v uint64
		if v, p, err = uvarint(p); err != nil {
			return xzBlock{}, err
		}
		if v != f.want {
			return xzBlock{}, fmt.Errorf("header records %d %s bytes, the index %d", v, f.what, f.want)
		}
	}
	n := int(flags&3) + 1
	for i := range n {
		var id, size uint64
		if id, p, err = uvarint(p); err != nil {
			return xzBlock{}, err
		}
		if size, p, err = uvarint(p); err != nil {
			return xzBlock{}, err
		}
		if size > uint64(len(p)) {
			return xzBlock{}, fmt.Errorf("filter properties do not fit")
		}
		props := p[:size]
		p = p[size:]
		if i < n-1 {
			f, err := parsePreFilter(id, props)
			if err != nil {
				return xzBlock{}, err
			}
			blk.filters = append(blk.filters, f)
			continue
		}
		if id != lzmaFilterLZMA2 {
			return xzBlock{}, Unsupportedf("xz block ending in filter %#x (only LZMA2)", id)
		}
		if len(props) != 1 || props[0] > 40 {
			return xzBlock{}, fmt.Errorf("bad LZMA2 properties % x", props)
		}
		blk.dict = int(min(uint64(2|props[0]&1)<<(props[0]/2+11), 1<<31-1))
	}
	for _, c := range p {
		if c != 0 {
			return xzBlock{}, fmt.Errorf("header padding is not zero")
		}
	}
	return blk, nil
}

// xzEncode writes data as one xz stream of one block: the filters, then
// LZMA2 with dictionary capacity dict, and the check checkID.
func xzEncode(data []byte, filters []preFilter, dict int, checkID byte) ([]byte, error) {
	filtered := data
	if len(filters) > 0 {
		filtered = bytes.Clone(data)
		for _, f := range filters {
			f.apply(filtered, true)
		}
	}
	var comp bytes.Buffer
	w, err := lzma.Writer2Config{DictCap: dict}.NewWriter2(&comp)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(filtered); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	flags := []byte{0, checkID}
	out := append(bytes.Clone(xzMagic), flags...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(flags))

	// The block header: size, flags (filter count), the filters, padding, CRC32.
	h := []byte{0, byte(len(filters))}
	for _, f := range filters {
		props := f.props()
		h = append(xzAppendUvarint(xzAppendUvarint(h, f.id), uint64(len(props))), props...)
	}
	var prop byte // the smallest LZMA2 dictionary size code that holds dict
	for uint64(2|prop&1)<<(prop/2+11) < uint64(dict) && prop < 40 {
		prop++
	}
	h = append(xzAppendUvarint(h, lzmaFilterLZMA2), 1, prop)
	for (len(h)+4)%4 != 0 {
		h = append(h, 0)
	}
	h[0] = byte((len(h)+4)/4 - 1)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(h))
	blockStart := len(out)
	out = append(append(out, h...), comp.Bytes()...)
	unpadded := len(out) - blockStart
	for (len(out)-blockStart)%4 != 0 {
		out = append(out, 0)
	}
	// The check follows the padding; the unpadded size counts it.
	if sum := xzCheck(checkID, data); sum != nil {
		out = append(out, sum...)
		unpadded += len(sum)
	}
	// The index: one record, padding, CRC32; then the footer.
	indexStart := len(out)
	out = append(out, 0)
	out = xzAppendUvarint(xzAppendUvarint(xzAppendUvarint(out, 1), uint64(unpadded)), uint64(len(data)))
	for (len(out)-indexStart)%4 != 0 {
		out = append(out, 0)
	}
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out[indexStart:]))
	footer := binary.LittleEndian.AppendUint32(nil, uint32((len(out)-indexStart)/4-1))
	footer = append(footer, flags...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(footer))
	return append(append(out, footer...), 'Y', 'Z'), nil
}

// xzAppendUvarint appends an xz variable-length integer.
func xzAppendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
