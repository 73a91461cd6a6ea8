package dotenv

import (
	"errors"
	"github.com/binkyhq/binky/internal/wine"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/safefile"
)

func TestReadFile(t *testing.T) {
	wine.Skip(t, "a symbolic link Wine makes cannot be opened")
	dir := t.TempDir()
	p := filepath.Join(dir, ".env")
	os.WriteFile(p, []byte("A=1\n"), 0o600)
	if m, err := ReadFile(p); err != nil || m["A"] != "1" {
		t.Errorf("ReadFile = %v, %v", m, err)
	}
	link := filepath.Join(dir, "link")
	if os.Symlink(p, link) == nil {
		if m, err := ReadFile(link); err != nil || m["A"] != "1" {
			t.Errorf("ReadFile(symlink to a file) = %v, %v", m, err)
		}
	}
	// A missing file keeps the open error (the daemon says "does not
	// exist" for it).
	_, err := ReadFile(filepath.Join(dir, "nope"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no such file") && !strings.Contains(err.Error(), "cannot find") {
		t.Errorf("ReadFile(missing) = %v; want fs.ErrNotExist", err)
	}
}

func TestReadFileRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadFile(dir)
	if !errors.Is(err, safefile.ErrNotRegular) || err.Error() != "env_file "+dir+" is a directory, not a regular file" {
		t.Errorf("ReadFile(dir) = %v", err)
	}
}

func TestReadFileRefusesLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.env")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20) // sparse: refused by its size, unread
	f.Close()
	_, err = ReadFile(p)
	if !errors.Is(err, safefile.ErrTooLarge) || err.Error() != "env_file "+p+" is larger than 1048576 bytes" {
		t.Errorf("ReadFile(100 MB) = %v", err)
	}
}
