package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// prepare advises the whole huge pages within b MADV_HUGEPAGE and
// populates the pages around them.
func prepare(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hs := (p + HugePage - 1) &^ (HugePage - 1)
	he := (p + uintptr(len(b))) &^ (HugePage - 1)
	if he <= hs {
		populate(b)
		return
	}
	if unix.Madvise(b[hs-p:he-p], unix.MADV_HUGEPAGE) != nil {
		populate(b)
		return
	}
	populate(b[:hs-p])
	populate(b[he-p:])
}

// populate faults in the whole pages within b ahead of their first write,
// with one MADV_POPULATE_WRITE (Linux 5.14). It is advice: an older
// kernel's EINVAL leaves the pages to fault as usual.
func populate(b []byte) {
	const page = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + page - 1) &^ (page - 1)
	end := (p + uintptr(len(b))) &^ (page - 1)
	if end > start {
		unix.Madvise(b[start-p:end-p], unix.MADV_POPULATE_WRITE)
	}
}
