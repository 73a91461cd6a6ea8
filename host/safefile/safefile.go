package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// ErrNotRegular is wrapped by the *Error OpenRegular and ReadRegular return
// for a path that is not a regular file (a FIFO, a device, a socket, a
// directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the *Error ReadRegular returns for a file
// larger than its limit.
var ErrTooLarge = errors.New("file too large")

// Error is a file refused for what it is or for its size.
type Error struct {
	Path string
	// Kind says what the file is instead of a regular file ("a FIFO",
	// "a character device"…); empty for ErrTooLarge.
	Kind string
	// Limit is the bound a too-large file went over.
	Limit int64
	// Err is ErrNotRegular or ErrTooLarge.
	Err error
}

// Error is "<path> is a FIFO, not a regular file" or "<path> is larger
// than <limit> bytes".
func (e *Error) Error() string { return e.Path + " " + e.Reason() }

// Reason is the error without the path: "is a FIFO, not a regular file"
// or "is larger than <limit> bytes".
func (e *Error) Reason() string {
	if errors.Is(e.Err, ErrTooLarge) {
		return fmt.Sprintf("is larger than %d bytes", e.Limit)
	}
	return "is " + e.Kind + ", not a regular file"
}

func (e *Error) Unwrap() error { return e.Err }

// Kind names a non-regular file mode the way errors say it: "a FIFO",
// "a socket", "a character device", "a block device", "a directory", "a
// symlink" or "an irregular file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

func notRegular(path string, m fs.FileMode) *Error {
	return &Error{Path: path, Kind: Kind(m), Err: ErrNotRegular}
}

func tooLarge(path string, limit int64) *Error {
	return &Error{Path: path, Limit: limit, Err: ErrTooLarge}
}

// CheckMode returns the *Error OpenRegular would for a file of mode m at
// path, or nil when m is a regular file. Callers that walk a tree (where
// lstat gives each entry's type) use it to name what they skip.
func CheckMode(path string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	return notRegular(path, m)
}

// ReadRegular reads the regular file at path (through symlinks) whole.
// A path that is not a regular file is refused without blocking, with an
// *Error wrapping ErrNotRegular; a file larger than limit bytes is refused
// with an *Error wrapping ErrTooLarge, having read at most limit+1 bytes of
// it. Other errors are the *fs.PathError of the open or the read.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}

// readLimited reads f whole, refusing more than limit bytes.
func readLimited(f *os.File, path string, limit int64) ([]byte, error) {
	limit = max(min(limit, math.MaxInt64-1), 0) // limit+1 must not overflow
	size := int64(0)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	if size > limit {
		return nil, tooLarge(path, limit)
	}
	// The size is a hint (procfs says 0; a file may grow under us): read
	// until EOF or one byte past the limit.
	buf := make([]byte, 0, min(size, limit)+1)
	r := io.LimitReader(f, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
	}
	if int64(len(buf)) > limit {
		return nil, tooLarge(path, limit)
	}
	return buf, nil
}

// ReadRegularNoFollow is ReadRegular for a path that must itself be the
// regular file (OpenRegularNoFollow): a symlink at path is refused with an
// *Error wrapping ErrNotRegular ("is a symlink, not a regular file"),
// whatever it points to, without opening it.
func ReadRegularNoFollow(path string, limit int64) ([]byte, error) {
	f, err := OpenRegularNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}
