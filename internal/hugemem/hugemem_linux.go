package hugemem

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault in the
// pages of a range, writable, in one call.
const madvPopulateWrite = 23

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
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, hs, he-hs, syscall.MADV_HUGEPAGE); e != 0 {
		populate(b)
		return
	}
	populate(b[:hs-p])
	populate(b[he-p:])
}

// pages returns the range of the whole pages within b.
func pages(b []byte) (start, end uintptr, ok bool) {
	const page = 4096
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start = (p + page - 1) &^ (page - 1)
	end = (p + uintptr(len(b))) &^ (page - 1)
	return start, end, end > start
}

// populate faults in the whole pages within b ahead of their first write.
// It is advice: an older kernel's EINVAL leaves the pages to fault as
// usual.
func populate(b []byte) {
	if start, end, ok := pages(b); ok {
		syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
	}
}
