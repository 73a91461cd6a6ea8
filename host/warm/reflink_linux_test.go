package warm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// reflinkDir is the reflink-capable filesystem scripts/testenv mounts
// (BINKY_TEST_REFLINK_DIR). Under CI=true its absence fails the test.
func reflinkDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BINKY_TEST_REFLINK_DIR")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BINKY_TEST_REFLINK_DIR is not set: CI must run scripts/testenv up (as root) to mount the reflink filesystem")
		}
		t.Skip("BINKY_TEST_REFLINK_DIR is not set; run scripts/testenv up as root and export it")
	}
	d, err := os.MkdirTemp(dir, "warm-")
	if err != nil {
		t.Fatalf("use the reflink filesystem %s: %v", dir, err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// fiemapShared reports whether every extent of the file at p is shared
// with another file (FIEMAP_EXTENT_SHARED), and how many extents it has.
func fiemapShared(t *testing.T, p string) (bool, int) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const (
		fsIocFiemap    = 0xC020660B
		flagSync       = 0x1
		extentShared   = 0x2000
		headerSize     = 32
		extentSize     = 56
		maxExtents     = 32
		extentFlagsOff = 40
	)
	buf := make([]byte, headerSize+extentSize*maxExtents)
	*(*uint64)(unsafe.Pointer(&buf[8])) = ^uint64(0) // fm_length: the whole file
	*(*uint32)(unsafe.Pointer(&buf[16])) = flagSync
	*(*uint32)(unsafe.Pointer(&buf[24])) = maxExtents
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); errno != 0 {
		t.Fatalf("FIEMAP %s: %v", p, errno)
	}
	n := int(*(*uint32)(unsafe.Pointer(&buf[20])))
	for i := range n {
		flags := *(*uint32)(unsafe.Pointer(&buf[headerSize+i*extentSize+extentFlagsOff]))
		if flags&extentShared == 0 {
			return false, n
		}
	}
	return n > 0, n
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// TestReflinkSharesExtents: on a filesystem that clones, a node_modules of
// 10,000 small files is copied by reflink: every copied file's extents are
// shared with the original (FIEMAP), the copy costs far less free space
// than its size, and the content is the same.
func TestReflinkSharesExtents(t *testing.T) {
	base := reflinkDir(t)
	src, dst := filepath.Join(base, "main"), filepath.Join(base, "feat")
	os.Mkdir(src, 0o755)
	os.Mkdir(dst, 0o755)
	const n = 10000
	tree(t, src, "node_modules", n)
	unix.Sync()
	before := freeBytes(t, base)
	res, err := Copy(context.Background(), src, dst, []string{"node_modules"}, Options{Tracked: noneTracked})
	if err != nil {
		t.Fatal(err)
	}
	unix.Sync()
	used := before - freeBytes(t, base)
	if res.Cloned != n || res.ByteCopied != 0 || res.Mode() != ModeReflink {
		t.Fatalf("cloned %d, byte-copied %d (%s); want all %d cloned", res.Cloned, res.ByteCopied, res.Mode(), n)
	}
	unshared := 0
	filepath.WalkDir(filepath.Join(dst, "node_modules"), func(p string, de os.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			if ok, _ := fiemapShared(t, p); !ok {
				unshared++
			}
		}
		return nil
	})
	if unshared > 0 {
		t.Errorf("%d of %d copied files do not share their extents with the original", unshared, n)
	}
	if used > res.Bytes/2 {
		t.Errorf("the copy of %d bytes took %d bytes of free space; a reflink copy shares its data", res.Bytes, used)
	}
	t.Logf("%d files, %d bytes copied by reflink; free space used: %d bytes", n, res.Bytes, used)
	if got := sameTree(t, src, dst, "node_modules"); got != n {
		t.Fatalf("compared %d files; want %d", got, n)
	}
}
