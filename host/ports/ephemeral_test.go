package ports

import (
	"slices"
	"strings"
	"testing"
)

func TestEphemeralOverlap(t *testing.T) {
	t.Parallel()
	e := Ephemeral{Range: [2]int{32768, 60999}, Reserved: [][2]int{{40000, 40009}, {42000, 42000}}}
	tests := []struct {
		r    [2]int
		want [][2]int
	}{
		{[2]int{20000, 29999}, nil},                                                      // binky's default: clear
		{[2]int{30000, 32767}, nil},                                                      // up to the range's first port
		{[2]int{61000, 62000}, nil},                                                      // past its last
		{[2]int{32000, 33000}, [][2]int{{32768, 33000}}},                                 // its low end
		{[2]int{60000, 61999}, [][2]int{{60000, 60999}}},                                 // its high end
		{[2]int{39000, 42999}, [][2]int{{39000, 39999}, {40010, 41999}, {42001, 42999}}}, // reserved runs left out
		{[2]int{40000, 40009}, nil},                                                      // all reserved
	}
	for _, tc := range tests {
		if got := e.Overlap(tc.r); !slices.Equal(got, tc.want) {
			t.Errorf("Overlap(%v) = %v; want %v", tc.r, got, tc.want)
		}
	}
}

func TestEphemeralFix(t *testing.T) {
	t.Parallel()
	linux := Ephemeral{Range: [2]int{32768, 60999}}
	if got, want := linux.Fix([2]int{42000, 43000}), "move port_range below it, e.g. port_range = [31767, 32767]"; got != want {
		t.Errorf("Fix = %q; want %q", got, want)
	}
	wide := Ephemeral{Range: [2]int{1500, 65000}}
	if got := wide.Fix([2]int{42000, 42099}); !strings.HasPrefix(got, "move port_range below it, e.g. port_range = [1400, 1499]") {
		t.Errorf("Fix(100 ports, range from 1500) = %q; want the 100 ports below 1500", got)
	}
	if got := wide.Fix([2]int{42000, 43000}); got != "move port_range out of it" {
		t.Errorf("Fix(no room either side) = %q; want only to move it", got)
	}
	withFix := Ephemeral{Range: [2]int{32768, 60999}, fix: func([2]int, Ephemeral) string { return "reserve it" }}
	if got := withFix.Fix([2]int{32768, 33767}); got != "move port_range below it, e.g. port_range = [31768, 32767], or reserve it" {
		t.Errorf("Fix with the platform's = %q", got)
	}
}

func TestNarrowed(t *testing.T) {
	t.Parallel()
	e := [2]int{32768, 60999}
	for _, tc := range []struct {
		r    [2]int
		want [2]int
		ok   bool
	}{
		{[2]int{32000, 33999}, [2]int{34000, 60999}, true},
		{[2]int{60000, 61000}, [2]int{32768, 59999}, true},
		{[2]int{40000, 41000}, [2]int{}, false}, // inside: no end to move
		{[2]int{30000, 62000}, [2]int{}, false}, // covers it
	} {
		if got, ok := narrowed(tc.r, e); got != tc.want || ok != tc.ok {
			t.Errorf("narrowed(%v) = %v, %v; want %v, %v", tc.r, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseEphemeralFiles(t *testing.T) {
	t.Parallel()
	if r, ok := parseLocalPortRange("32768\t60999\n"); !ok || r != [2]int{32768, 60999} {
		t.Errorf("parseLocalPortRange = %v, %v; want [32768 60999]", r, ok)
	}
	for _, bad := range []string{"", "32768", "60999 32768", "0 100", "1 70000", "a b", "1 2 3", "+5 10"} {
		if r, ok := parseLocalPortRange(bad); ok {
			t.Errorf("parseLocalPortRange(%q) = %v; want refused", bad, r)
		}
	}
	if got, want := parseReservedPorts("8080,9000-9100, x,5-3,70000\n"), [][2]int{{8080, 8080}, {9000, 9100}}; !slices.Equal(got, want) {
		t.Errorf("parseReservedPorts = %v; want %v", got, want)
	}
	if got := parseReservedPorts("\n"); got != nil {
		t.Errorf("parseReservedPorts(empty) = %v; want none", got)
	}
	netsh := "\r\nProtocol tcp Dynamic Port Range\r\n---------------------------------\r\nStart Port      : 49152\r\nNumber of Ports : 16384\r\n\r\n"
	if r, ok := parseDynamicPort(netsh); !ok || r != [2]int{49152, 65535} {
		t.Errorf("parseDynamicPort(netsh) = %v, %v; want [49152 65535]", r, ok)
	}
	german := "Protokoll tcp Dynamischer Portbereich\n---\nStartport       : 10000\nAnzahl der Ports : 1000\n"
	if r, ok := parseDynamicPort(german); !ok || r != [2]int{10000, 10999} {
		t.Errorf("parseDynamicPort(translated) = %v, %v; want [10000 10999]", r, ok)
	}
	for _, bad := range []string{"", "Start Port : 60000\nNumber of Ports : 10000\n", "Start Port : 0\nNumber of Ports : 5\n", "Start Port : 5\n"} {
		if r, ok := parseDynamicPort(bad); ok {
			t.Errorf("parseDynamicPort(%q) = %v; want refused", bad, r)
		}
	}
}

// FuzzEphemeralParsers: whatever the files or netsh say, a range read is
// of valid ports, lo <= hi.
func FuzzEphemeralParsers(f *testing.F) {
	for _, s := range []string{"32768\t60999\n", "8080,9000-9100\n", "Start Port      : 49152\r\nNumber of Ports : 16384\r\n", "", "1-65535"} {
		f.Add(s)
	}
	valid := func(r [2]int) bool { return r[0] >= 1 && r[0] <= r[1] && r[1] <= 65535 }
	f.Fuzz(func(t *testing.T, s string) {
		if r, ok := parseLocalPortRange(s); ok && !valid(r) {
			t.Errorf("parseLocalPortRange(%q) = %v", s, r)
		}
		for _, r := range parseReservedPorts(s) {
			if !valid(r) {
				t.Errorf("parseReservedPorts(%q) has %v", s, r)
			}
		}
		if r, ok := parseDynamicPort(s); ok && !valid(r) {
			t.Errorf("parseDynamicPort(%q) = %v", s, r)
		}
	})
}
