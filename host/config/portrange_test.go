package config

import (
	"fmt"
	"strings"
	"testing"
)

// fakeEphemeral is an ephemeral range [lo, hi] with no reserved ports.
type fakeEphemeral [2]int

func (e fakeEphemeral) Overlap(r [2]int) [][2]int {
	lo, hi := max(r[0], e[0]), min(r[1], e[1])
	if lo > hi {
		return nil
	}
	return [][2]int{{lo, hi}}
}
func (e fakeEphemeral) Fix([2]int) string { return "move it" }
func (e fakeEphemeral) String() string {
	return fmt.Sprintf("the kernel's ephemeral port range %d-%d (test)", e[0], e[1])
}

func TestCheckPortRange(t *testing.T) {
	t.Parallel()
	eph := fakeEphemeral{32768, 60999}
	def := [2]int{20000, 29999}
	tests := []struct {
		name, toml string
		eph        EphemeralPorts
		def        [2]int
		want       string // the message's start; "" for no warning
		line       int
	}{
		{"inside", "[project]\nname = \"p\"\nport_range = [42000, 43000]\n", eph, def,
			"project.port_range 42000-43000 lies inside the kernel's ephemeral port range 32768-60999 (test): an outgoing connection", 3},
		{"one end", "[project]\nname = \"p\"\nport_range = [30000, 32768]\n", eph, def,
			"project.port_range 30000-32768 overlaps the kernel's ephemeral port range 32768-60999 (test) at ports 32768:", 3},
		{"clear", "[project]\nname = \"p\"\nport_range = [30000, 32767]\n", eph, def, "", 0},
		{"default clear", "[project]\nname = \"p\"\n", eph, def, "", 0},
		{"default inside", "[project]\nname = \"p\"\n", fakeEphemeral{1024, 65535}, def,
			"binky's default port range 20000-29999 lies inside the kernel's ephemeral port range 1024-65535 (test):", 1},
		{"not known", "[project]\nname = \"p\"\nport_range = [42000, 43000]\n", nil, def, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ds, err := Parse("binky.toml", []byte(tc.toml+"\n[services.web]\ncmd = \"true\"\n"))
			if err != nil || ds.HasErrors() {
				t.Fatalf("Parse: %v %v", err, ds)
			}
			got := CheckPortRange("binky.toml", cfg, tc.def, tc.eph)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("CheckPortRange = %v; want nothing", got)
				}
				return
			}
			if len(got) != 1 || got[0].Severity != SeverityWarning || !strings.HasPrefix(got[0].Message, tc.want) || got[0].Hint != "move it" || got[0].Line != tc.line {
				t.Errorf("CheckPortRange = %v; want one warning at line %d: %s… (move it)", got, tc.line, tc.want)
			}
		})
	}
}
