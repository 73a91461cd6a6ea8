package ports

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseLeaseName: a lease file name parses only to a valid range that
// names it again exactly.
func FuzzParseLeaseName(f *testing.F) {
	for _, s := range []string{"block-20000-20004.json", "block-1-1.json", "block-01-3.json", "block-2-1.json", ".lock", "block--1-3.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		lo, hi, ok := parseLeaseName(name)
		if !ok {
			return
		}
		if validRange([2]int{lo, hi}) != nil || leaseName(lo, hi) != name {
			t.Errorf("parseLeaseName(%q) = %d, %d: not a valid range naming it", name, lo, hi)
		}
	})
}

// FuzzParseDirName: a user's subdirectory name parses only when the
// user's n-th name (from 1 to maxOwnDirs) is exactly it.
func FuzzParseDirName(f *testing.F) {
	for _, s := range []string{ownerPrefix + "1001", ownerPrefix + "1001.2", ownerPrefix + "0.16", ownerPrefix + "1.1", ownerPrefix + ".2", "block-1-2.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		id, ok := parseDirName(name)
		if !ok {
			return
		}
		for n := 1; n <= maxOwnDirs; n++ {
			if ownDirName(id, n) == name {
				return
			}
		}
		t.Errorf("parseDirName(%q) = %q, but no name of that user is it", name, id)
	})
}

// FuzzReadLease is the reader of a lease file's content: whatever the
// bytes (another user wrote them), parseLease and checkClaim never panic,
// a parsed lease names the block of its file name, and a claim that holds
// is no wider than MaxBlock and names the file's owner.
func FuzzReadLease(f *testing.F) {
	f.Add([]byte(`{"lo":20000,"hi":20004,"uid":1001,"home_id":"ab","home_dir":"/home/a/.binky","pid":42,"pid_start":7}`), "block-20000-20004.json", "1001", "1001")
	f.Add([]byte(`{}`), "block-1024-65535.json", "1001", "1001")
	f.Add([]byte(`{"lo":1024,"hi":65535,"uid":1001}`), "block-1024-65535.json", "1001", "1001")
	f.Add([]byte(`{"lo":20000,"hi":20001,"uid":0,"sid":"S-1-5-18"}`), "block-20000-20001.json", "1002", "1002")
	f.Add([]byte("not json"), "block-5-6.json", "0", "0")
	f.Fuzz(func(t *testing.T, b []byte, name, owner, dirOwner string) {
		le, err := parseLease(b, name)
		if err != nil {
			return
		}
		if lo, hi, ok := parseLeaseName(name); !ok || le.Lo != lo || le.Hi != hi {
			t.Fatalf("parseLease(%q) = %d-%d; not the block of its name", name, le.Lo, le.Hi)
		}
		if checkClaim(le, owner, dirOwner) != nil {
			return
		}
		if le.Hi-le.Lo+1 > MaxBlock || leaseOwner(le) != owner || owner != dirOwner {
			t.Errorf("claim %+v by %q in %q's directory holds; want it refused", le, owner, dirOwner)
		}
	})
}

// FuzzParseStatStart: any /proc/<pid>/stat text parses or is refused,
// never panics.
func FuzzParseStatStart(f *testing.F) {
	f.Add([]byte("4242 (binkyd (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 9 0 123456 1000 10\n"))
	f.Add([]byte("1 (init) S 0"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, b []byte) { parseStatStart(b) })
}

// FuzzParseLocksHolder: any /proc/locks text gives a pid that one of its
// lines names, or 0.
func FuzzParseLocksHolder(f *testing.F) {
	f.Add([]byte("1: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF\n2: -> FLOCK  ADVISORY  WRITE 5 00:2f:1234 0 EOF\n"), uint32(0), uint32(0x2f), uint64(1234))
	f.Add([]byte("1: POSIX  ADVISORY  WRITE 3850 fe:00:786446 0 EOF\n"), uint32(0xfe), uint32(0), uint64(786446))
	f.Fuzz(func(t *testing.T, text []byte, major, minor uint32, ino uint64) {
		pid := parseLocksHolder(text, major, minor, ino)
		if pid < 0 || (pid > 0 && !slices.ContainsFunc(strings.Fields(string(text)), func(f string) bool {
			n, err := strconv.Atoi(f)
			return err == nil && n == pid
		})) {
			t.Errorf("holder %d is named by no line of %q", pid, text)
		}
	})
}
