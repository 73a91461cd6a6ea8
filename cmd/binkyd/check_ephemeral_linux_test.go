//go:build linux

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/ports"
)

// TestCheckPortRangeEphemeral: check warns, at the port_range line, when
// the project's range overlaps this machine's ephemeral range, naming both;
// a range below it passes.
func TestCheckPortRangeEphemeral(t *testing.T) {
	eph, err := ports.EphemeralRange(context.Background())
	if err != nil {
		t.Fatalf("EphemeralRange: %v", err)
	}
	inside := [2]int{eph.Range[0], min(eph.Range[0]+99, eph.Range[1])}
	if len(eph.Overlap(inside)) == 0 {
		t.Skipf("the start of %s is reserved from it here", eph)
	}
	_, file := checkRepo(t, fmt.Sprintf("[project]\nname = \"acme\"\nport_range = [%d, %d]\n\n[services.api]\ncmd = \"api\"\n", inside[0], inside[1]))
	code, out, errOut := checkNoHang(t, file)
	want := fmt.Sprintf("%s:3: warning: project.port_range %d-%d lies inside %s: ", file, inside[0], inside[1], eph)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "move port_range") {
		t.Errorf("check: exit %d, stdout %q (stderr %q); want exit 0 and %q… (move port_range…)", code, out, errOut, want)
	}
	if eph.Range[0] > 1124 {
		_, file := checkRepo(t, fmt.Sprintf("[project]\nname = \"acme\"\nport_range = [%d, %d]\n\n[services.api]\ncmd = \"api\"\n", eph.Range[0]-100, eph.Range[0]-1))
		if code, out, _ := checkNoHang(t, file); code != 0 || strings.Contains(out, "overlaps") {
			t.Errorf("check of a range below %s: exit %d, %q; want no warning", eph, code, out)
		}
	}
}
