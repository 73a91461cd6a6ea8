package world

import (
	"testing"
	"time"
)

func TestParseProcUsage(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     procUsage
		ok       bool
	}{
		{"plain", "42 (sleep) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0 12345 1000000 2048 18446744073709551615", procUsage{rssPages: 2048, cpu: 2 * time.Second}, true},
		{"parens in name", "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 100 3 0", procUsage{rssPages: 3, cpu: 30 * time.Millisecond}, true},
		{"short", "7 (x) R 1 2 3", procUsage{}, false},
		{"no name", "7 x R", procUsage{}, false},
		{"negative", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 -1 2 0 0 20 0 1 0 9 100 3 0", procUsage{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcUsage([]byte(tc.in))
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, ok %v", got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestParseCPUStat(t *testing.T) {
	got, ok := parseCPUStat([]byte("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"))
	if !ok || got != 2500*time.Millisecond {
		t.Errorf("got %v, %v; want 2.5s, true", got, ok)
	}
	if _, ok := parseCPUStat([]byte("user_usec 1\n")); ok {
		t.Error("a cpu.stat without usage_usec parsed")
	}
}

func FuzzParseProcUsage(f *testing.F) {
	f.Add([]byte("42 (sleep) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0 12345 1000000 2048 0"))
	f.Add([]byte("7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 100 3 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := parseProcUsage(b)
		if err == nil && (u.rssPages < 0 || u.cpu < 0) {
			t.Errorf("parsed negative figures %+v from %q", u, b)
		}
	})
}

func FuzzParseCPUStat(f *testing.F) {
	f.Add([]byte("usage_usec 2500000\nuser_usec 2000000\n"))
	f.Add([]byte("usage_usec 99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, ok := parseCPUStat(b); ok && d < 0 {
			t.Errorf("parsed negative usage %v from %q", d, b)
		}
	})
}
