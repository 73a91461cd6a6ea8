package memtrim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// trimImage drops the read-only, unmodified mappings of the running
// executable (MADV_DONTNEED): a later access refaults from the page cache.
func trimImage() (Result, error) {
	var r Result
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		return r, fmt.Errorf("stat /proc/self/exe: %w", err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return r, fmt.Errorf("read /proc/self/smaps: %w", err)
	}
	dev := fmt.Sprintf("%02x:%02x", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
	for _, m := range imageMappings(b, dev, st.Ino) {
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); e != 0 {
			return r, fmt.Errorf("madvise %#x-%#x: %w", m.start, m.end, e)
		}
		r.Mappings++
		r.ImageBytes += uint64(m.end - m.start)
	}
	return r, nil
}

type mapping struct{ start, end uintptr }

// imageMappings parses smaps and returns the mappings of inode ino on dev
// ("fe:00") that are not writable and hold no anonymous (copied-on-write)
// pages.
func imageMappings(smaps []byte, dev string, ino uint64) []mapping {
	var out []mapping
	var cur *mapping
	ok := false
	flush := func() {
		if cur != nil && ok {
			out = append(out, *cur)
		}
		cur, ok = nil, false
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		// A mapping's header: "start-end perms offset dev inode [path]".
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			flush()
			se := strings.SplitN(f[0], "-", 2)
			start, err1 := strconv.ParseUint(se[0], 16, 64)
			end, err2 := strconv.ParseUint(se[1], 16, 64)
			inode, err3 := strconv.ParseUint(f[4], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil || end <= start {
				continue
			}
			if inode != ino || f[3] != dev || len(f[1]) < 4 || f[1][1] == 'w' || f[1][0] != 'r' {
				continue
			}
			cur, ok = &mapping{start: uintptr(start), end: uintptr(end)}, true
			continue
		}
		// "Anonymous:   N kB": a page copied on write (a debugger's
		// breakpoint) would be lost to MADV_DONTNEED; leave that mapping.
		if cur != nil && f[0] == "Anonymous:" && len(f) >= 2 && f[1] != "0" {
			ok = false
		}
	}
	flush()
	return out
}
