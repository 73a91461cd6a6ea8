package memtrim

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const smapsSample = `00400000-00f88000 r-xp 00000000 fe:00 42                           /usr/bin/binkyd
Size:              11808 kB
Rss:               10464 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me sd
00f88000-01b21000 r--p 00b88000 fe:00 42                           /usr/bin/binkyd
Size:              11876 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
01b21000-01bd2000 rw-p 01721000 fe:00 42                           /usr/bin/binkyd
Size:                708 kB
Anonymous:           212 kB
VmFlags: rd wr mr mw me ac sd
01c00000-01c10000 r-xp 00000000 fe:00 42                           /usr/bin/binkyd
Anonymous:             4 kB
VmFlags: rd ex mr mw me sd
02000000-02001000 r--p 00000000 fe:01 42                           /other/device/same/inode
Anonymous:             0 kB
7f0000000000-7f0000001000 r--p 00000000 fe:00 43                   /usr/lib/other.so
Anonymous:             0 kB
c000000000-c000400000 rw-p 00000000 00:00 0
Anonymous:          4096 kB
`

func TestImageMappingsPicksOnlyCleanReadOnlyImage(t *testing.T) {
	got := imageMappings([]byte(smapsSample), "fe:00", 42)
	want := []mapping{{0x400000, 0xf88000}, {0xf88000, 0x1b21000}}
	if len(got) != len(want) {
		t.Fatalf("got %d mappings %x, want %x (writable, copied-on-write, other device and other files left alone)", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %x, want %x", i, got[i], want[i])
		}
	}
}

func rssFileKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no RssFile in /proc/self/status: CI needs the figure")
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestTrimDropsImagePages trims this test binary: its file-backed resident
// set shrinks, and it keeps running (the pages come back on use).
func TestTrimDropsImagePages(t *testing.T) {
	before := rssFileKiB(t)
	r, err := Trim()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKiB(t)
	if r.Mappings == 0 || r.ImageBytes == 0 {
		t.Fatalf("Trim found no mappings of its own executable: %+v", r)
	}
	if after >= before {
		t.Errorf("RssFile %d KiB before the trim, %d after: nothing was handed back", before, after)
	}
	t.Logf("RssFile %d → %d KiB (%d mappings, %d bytes of image, %v)", before, after, r.Mappings, r.ImageBytes, r.Took)
	// Code that ran before the trim still runs after it.
	if _, err := Trim(); err != nil {
		t.Fatal(err)
	}
}

func FuzzImageMappings(f *testing.F) {
	f.Add([]byte(smapsSample))
	f.Add([]byte("0-0 r-xp 0 fe:00 42 x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range imageMappings(b, "fe:00", 42) {
			if m.end <= m.start {
				t.Fatalf("empty or inverted mapping %x", m)
			}
		}
	})
}
