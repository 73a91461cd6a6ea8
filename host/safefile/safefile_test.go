package safefile

import (
	"bytes"
	"errors"
	"github.com/binkyhq/binky/internal/wine"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int64{5, 6, 1 << 20, math.MaxInt64} {
		got, err := ReadRegular(p, limit)
		if err != nil || string(got) != "hello" {
			t.Errorf("ReadRegular(limit %d) = %q, %v; want hello", limit, got, err)
		}
	}
	_, err := ReadRegular(p, 4)
	var se *Error
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &se) || err.Error() != p+" is larger than 4 bytes" {
		t.Errorf("ReadRegular(limit 4) error %v; want %s is larger than 4 bytes", err, p)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if got, err := ReadRegular(empty, 0); err != nil || len(got) != 0 {
		t.Errorf("empty file: %q, %v", got, err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "nope"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v; want fs.ErrNotExist", err)
	}
}

func TestReadRegularSymlink(t *testing.T) {
	wine.Skip(t, "a symbolic link Wine makes cannot be opened")
	dir := t.TempDir()
	p := filepath.Join(dir, "real")
	os.WriteFile(p, []byte("x=1"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(p, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if got, err := ReadRegular(link, 100); err != nil || string(got) != "x=1" {
		t.Errorf("ReadRegular through a symlink = %q, %v", got, err)
	}
}

func TestRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadRegular(dir, 100)
	if !errors.Is(err, ErrNotRegular) || err.Error() != dir+" is a directory, not a regular file" {
		t.Errorf("ReadRegular(dir) = %v; want %s is a directory, not a regular file", err, dir)
	}
	if f, err := OpenRegular(dir); err == nil {
		f.Close()
		t.Error("OpenRegular(dir) opened it")
	}
}

// TestSparseFileRefusedUnread: a 100 MB sparse file is refused by its size
// before anything is read.
func TestSparseFileRefusedUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadRegular(p, 1<<20)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "is larger than 1048576 bytes") {
		t.Errorf("ReadRegular(100 MB sparse) = %v; want larger than 1048576 bytes", err)
	}
}

func TestCheckModeAndKind(t *testing.T) {
	for _, tt := range []struct {
		m    fs.FileMode
		kind string
	}{
		{0, "a regular file"},
		{fs.ModeDir, "a directory"},
		{fs.ModeNamedPipe, "a FIFO"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeSymlink, "a symlink"},
		{fs.ModeIrregular, "an irregular file"},
	} {
		if got := Kind(tt.m); got != tt.kind {
			t.Errorf("Kind(%v) = %q; want %q", tt.m, got, tt.kind)
		}
		err := CheckMode("x", tt.m)
		if (err == nil) != (tt.m == 0) {
			t.Errorf("CheckMode(%v) = %v", tt.m, err)
		}
		if err != nil && err.Error() != "x is "+tt.kind+", not a regular file" {
			t.Errorf("CheckMode(%v) = %q", tt.m, err)
		}
	}
}

func TestReadLimitedGrowth(t *testing.T) {
	// Larger than the initial buffer guess (the file's size is the guess;
	// here it is exact, so reading must still stop one byte past limit).
	p := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("a"), 10000)
	os.WriteFile(p, data, 0o644)
	got, err := ReadRegular(p, 10000)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("ReadRegular = %d bytes, %v; want 10000", len(got), err)
	}
}
