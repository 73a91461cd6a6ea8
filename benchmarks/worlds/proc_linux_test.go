//go:build linux

package main

import (
	"os"
	"strings"
	"testing"
)

func TestParseStatPPid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
		ok   bool
	}{
		{name: "plain", in: "2201 (postgres) S 2200 2200 2200 0 -1", want: 2200, ok: true},
		{name: "comm with spaces and parens", in: "77 (a) b) (c) R 1 77 77 0", want: 1, ok: true},
		{name: "no comm", in: "77 S 1 77", ok: false},
		{name: "truncated", in: "77 (x) S", ok: false},
		{name: "not a number", in: "77 (x) S y 1", ok: false},
		{name: "empty", in: "", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStatPPid([]byte(tt.in))
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseStatPPid(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseRollup(t *testing.T) {
	in := `5626c5eb9000-7ffc22d62000 ---p 00000000 00:00 0                          [rollup]
Rss:               16012 kB
Pss:                5055 kB
Pss_Shmem:          4126 kB
Bogus:               abc kB
Swap:                  0 kB
`
	got := parseRollup([]byte(in))
	want := map[string]int64{"Rss": 16012, "Pss": 5055, "Pss_Shmem": 4126, "Swap": 0}
	if len(got) != len(want) {
		t.Errorf("parseRollup = %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("parseRollup[%s] = %d; want %d", k, got[k], v)
		}
	}
}

func TestParseMaps(t *testing.T) {
	in := `55d0c0a00000-55d0c0b00000 r-xp 00000000 fd:01 1234   /usr/lib/postgresql/15/bin/postgres
7fba00227000-7fba090bf000 rw-s 00000000 00:01 1030                       /dev/zero (deleted)
7fba0b431000-7fba0b438000 rw-s 00000000 00:1b 9                          /dev/shm/PostgreSQL.2839707788
7fba0b81f000-7fba0b820000 rw-s 00000000 00:01 4                          /SYSV000b6050 (deleted)
7fba0c000000-7fba0c100000 rw-p 00000000 00:00 0
7fba0d000000-7fba0d100000 r--s 00000000 fd:01 99  /var/lib/some file.db
`
	ms := parseMaps([]byte(in))
	if len(ms) != 6 {
		t.Fatalf("parseMaps: %d mappings; want 6: %+v", len(ms), ms)
	}
	var shared []string
	for _, m := range ms {
		if m.sharedMemory() {
			shared = append(shared, m.dev+":"+m.inode+" "+m.path)
		}
	}
	want := "00:01:1030 /dev/zero (deleted)|00:1b:9 /dev/shm/PostgreSQL.2839707788|00:01:4 /SYSV000b6050 (deleted)"
	if got := strings.Join(shared, "|"); got != want {
		t.Errorf("shared memory mappings %q; want %q", got, want)
	}
	if ms[5].path != "/var/lib/some file.db" {
		t.Errorf("path with a space = %q; want %q", ms[5].path, "/var/lib/some file.db")
	}
}

// TestMeasureTreeSelf reads this test's own memory: it must be there, and
// a process that does not exist adds nothing.
func TestMeasureTreeSelf(t *testing.T) {
	u, err := measureTree([]int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if u.procs < 1 || u.pss <= 0 {
		t.Errorf("measureTree(self) = %+v; want at least one process with PSS", u)
	}
	none, err := measureTree([]int{1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if none.procs != 0 || none.pss != 0 {
		t.Errorf("measureTree(no such pid) = %+v; want nothing", none)
	}
}

func FuzzParseStatPPid(f *testing.F) {
	f.Add([]byte("2201 (postgres) S 2200 2200 2200 0 -1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ppid, ok := parseStatPPid(b); ok && ppid < 0 {
			t.Errorf("parseStatPPid(%q) = %d; want no negative pid", b, ppid)
		}
	})
}

func FuzzParseRollup(f *testing.F) {
	f.Add([]byte("Rss: 16012 kB\nPss: 5055 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k, v := range parseRollup(b) {
			if v < 0 || k == "" {
				t.Errorf("parseRollup(%q): %q = %d; want named, non-negative values", b, k, v)
			}
		}
	})
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte("7fba00227000-7fba090bf000 rw-s 00000000 00:01 1030 /dev/zero (deleted)\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range parseMaps(b) {
			if !strings.Contains(m.addr, "-") || m.inode == "" {
				t.Errorf("parseMaps(%q) gave %+v; want an address range and an inode", b, m)
			}
			_ = m.sharedMemory()
		}
	})
}
