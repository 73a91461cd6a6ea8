package host

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/internal/wine"
)

const module = "github.com/binkyhq/binky/"

// below are the packages the world engine and the daemon stand on: they
// must never import either, on any platform, or the layers fold into a
// cycle of function values (issue 38).
var below = []string{
	module + "host/api",
	module + "host/registry",
	module + "host/supervisor",
	module + "host/proxy",
	module + "host/ports",
}

// above are what below may not reach: the engine (host/world and its
// subpackages, such as host/world/plan) and the daemon.
var above = []string{
	module + "host/world",
	module + "host/daemon",
}

// TestLayerFence: for GOOS linux, windows and darwin, no package of below
// imports, even indirectly, a package of above. host/daemon importing
// host/world is checked too, which proves the listing is real and the
// names are spelled right.
func TestLayerFence(t *testing.T) {
	wine.Skip(t, "needs the go toolchain to list the dependencies; the Linux tier checks the fence")
	for _, goos := range []string{"linux", "windows", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			deps := listDeps(t, goos, append(below, module+"host/daemon"))
			for _, pkg := range below {
				if len(deps[pkg]) < 10 {
					t.Fatalf("go list -deps %s printed %d packages; the fence would prove nothing", pkg, len(deps[pkg]))
				}
				for _, dep := range deps[pkg] {
					if layer := aboveOf(dep); layer != "" {
						t.Errorf("GOOS=%s: %s imports %s, directly or through its dependencies; %s stands below %s and must not reach it: move what it needs down, or declare a small interface where it is used", goos, pkg, dep, pkg, layer)
					}
				}
			}
			if !slices.Contains(deps[module+"host/daemon"], module+"host/world") {
				t.Errorf("GOOS=%s: host/daemon does not import host/world: the listing is wrong, or the fence names a package nobody uses", goos)
			}
		})
	}
}

// aboveOf is the package of above that pkg is, or lies under; "" if none.
func aboveOf(pkg string) string {
	for _, a := range above {
		if pkg == a || strings.HasPrefix(pkg, a+"/") {
			return a
		}
	}
	return ""
}

// listDeps is, for each of pkgs built for goos, every package it imports
// directly or not (go list -deps, test files excluded).
func listDeps(t *testing.T, goos string, pkgs []string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("GOOS=%s go list %s: %v\n%s", goos, strings.Join(pkgs, " "), err, stderr)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			deps[f[0]] = f[1:]
		}
	}
	for _, p := range pkgs {
		if _, ok := deps[p]; !ok {
			t.Fatalf("GOOS=%s go list printed nothing for %s", goos, p)
		}
	}
	return deps
}
