package supervisor

import (
	"testing"
)

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{"plain", "1234 (sleep) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100 18446744073709551615",
			procStat{State: 'S', Ppid: 1, Pgrp: 1234, Session: 1234, StartTime: 98765}, false},
		{"name with spaces and parens", "77 (a) b (c) Z 5 6 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0",
			procStat{State: 'Z', Ppid: 5, Pgrp: 6, Session: 7, StartTime: 42}, false},
		{"truncated", "1 (x) S 1 2 3", procStat{}, true},
		{"no parens", "1 x S 1 2 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 9", procStat{}, true},
		{"bad start time", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0 0", procStat{}, true},
		{"empty", "", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseStat([]byte(tt.line))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStat(%q) = %+v, %v; want %+v, error %v", tt.line, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100"))
	f.Add([]byte("77 (a) b (c) Z 5 6 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStat(b)
		if err != nil && s != (procStat{}) {
			t.Errorf("parseStat returned %+v with error %v", s, err)
		}
	})
}

func TestParseSignal(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"SIGTERM", "TERM", "term", "INT", "SIGQUIT", "15", "HUP"} {
		if sig, err := ParseSignal(name); err != nil || sig == 0 {
			t.Errorf("ParseSignal(%q) = %v, %v; want a signal", name, sig, err)
		}
	}
	for _, name := range []string{"", "SIGNOPE", "0", "-1", "999"} {
		if _, err := ParseSignal(name); err == nil {
			t.Errorf("ParseSignal(%q) = nil error; want one", name)
		}
	}
}

func FuzzParseSignal(f *testing.F) {
	for _, s := range []string{"SIGTERM", "int", "9", " QUIT "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if sig, err := ParseSignal(name); err == nil && sig <= 0 {
			t.Errorf("ParseSignal(%q) = %v without error", name, sig)
		}
	})
}
