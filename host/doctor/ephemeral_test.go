package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/ports"
)

// TestEphemeralFindings: binky's default range and each project's
// port_range are warned about when they overlap the ephemeral range,
// naming both ranges, the shared ports and a fix in the file to edit.
func TestEphemeralFindings(t *testing.T) {
	t.Parallel()
	eph := ports.Ephemeral{Range: [2]int{32768, 60999}, Reserved: [][2]int{{42500, 42599}}, Name: "the kernel's ephemeral port range 32768-60999 (test)"}
	def := portScope{rng: ports.DefaultRange()}
	clear := portScope{rng: [2]int{17000, 17999}, project: "clear", file: "/src/clear/binky.toml"}
	inside := portScope{rng: [2]int{42000, 42999}, project: "acme", file: "/src/acme/binky.toml"}

	fs := ephemeralFindings(eph, []portScope{def, clear})
	if len(fs) != 1 || fs[0].Status != StatusOK || !strings.Contains(fs[0].Message, "lie outside the kernel's ephemeral port range 32768-60999 (test)") {
		t.Errorf("findings with no overlap = %+v; want one ok", fs)
	}

	fs = ephemeralFindings(eph, []portScope{def, inside, clear})
	want := "project acme's port_range 42000-42999 overlaps the kernel's ephemeral port range 32768-60999 (test) at ports 42000-42499, 42600-42999: "
	if len(fs) != 1 || fs[0].Status != StatusWarn || !strings.HasPrefix(fs[0].Message, want) {
		t.Fatalf("findings = %+v; want one warning: %s…", fs, want)
	}
	if fix := fs[0].Fix; !strings.HasPrefix(fix, "in /src/acme/binky.toml: move port_range below it, e.g. port_range = [31768, 32767]") {
		t.Errorf("fix = %q; want the file and a range below 32768", fix)
	}

	wide := ports.Ephemeral{Range: [2]int{1024, 65535}, Name: "the kernel's ephemeral port range 1024-65535 (test)"}
	fs = ephemeralFindings(wide, []portScope{def})
	if len(fs) != 1 || fs[0].Status != StatusWarn || !strings.HasPrefix(fs[0].Message, "binky's default range 20000-29999 overlaps the kernel's ephemeral port range 1024-65535") ||
		!strings.HasPrefix(fs[0].Fix, "under [project] in binky.toml: ") {
		t.Errorf("findings for the default range = %+v; want a warning whose fix is a port_range under [project]", fs)
	}
}

// TestCheckEphemeralReadsTheMachine: the check reads this machine's range
// where it can, and names it.
func TestCheckEphemeralReadsTheMachine(t *testing.T) {
	t.Parallel()
	eph, err := ports.EphemeralRange(context.Background())
	fs := checkEphemeral(context.Background(), &Env{Home: t.TempDir(), GOOS: "test"})
	if err != nil {
		if len(fs) != 1 || fs[0].Status != StatusSkip {
			t.Errorf("findings where the range cannot be read (%v) = %+v; want one skip", err, fs)
		}
		return
	}
	if len(fs) == 0 || !strings.Contains(fs[0].Message, eph.String()) {
		t.Errorf("findings = %+v; want them to name %s", fs, eph)
	}
}
