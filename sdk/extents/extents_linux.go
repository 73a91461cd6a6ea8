package extents

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// FIEMAP (linux/fiemap.h): the extents of a file and, per extent, whether
// its blocks are shared with another file (a reflink copy).
const (
	fsIocFiemap        = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapExtentLast   = 0x1
	fiemapExtentShared = 0x2000
	fiemapBatch        = 64
)

// fiemapHeader is struct fiemap without its extents.
type fiemapHeader struct {
	start, length                        uint64
	flags, mappedExtents, extentCount, _ uint32
}

// fiemapExtent is struct fiemap_extent.
type fiemapExtent struct {
	logical, physical, length uint64
	_                         [2]uint64
	flags                     uint32
	_                         [3]uint32
}

// fiemapRequest is one FIEMAP call's buffer: the header, then room for
// fiemapBatch extents.
type fiemapRequest struct {
	h fiemapHeader
	e [fiemapBatch]fiemapExtent
}

// ErrUnsupported: the filesystem does not answer FIEMAP.
var ErrUnsupported = errors.New("the filesystem does not map extents (FIEMAP)")

// File reports how many bytes of the file at path are mapped to
// blocks, and how many of those the filesystem shares with another file.
func File(path string) (mapped, shared int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var req fiemapRequest
	var next uint64
	for {
		req.h = fiemapHeader{start: next, length: ^uint64(0) - next, extentCount: fiemapBatch}
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&req))); e != 0 {
			if e == syscall.EOPNOTSUPP || e == syscall.ENOTTY {
				return 0, 0, ErrUnsupported
			}
			return 0, 0, &os.PathError{Op: "fiemap", Path: path, Err: e}
		}
		n := int(req.h.mappedExtents)
		if n == 0 {
			return mapped, shared, nil
		}
		for _, x := range req.e[:n] {
			mapped += int64(x.length)
			if x.flags&fiemapExtentShared != 0 {
				shared += int64(x.length)
			}
			if x.flags&fiemapExtentLast != 0 {
				return mapped, shared, nil
			}
			next = x.logical + x.length
		}
	}
}
