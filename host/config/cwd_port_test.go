package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestAbsoluteCwdAndPortUnset(t *testing.T) {
	// Forward slashes: an absolute path on Windows too ("C:/…"), and one
	// a TOML basic string takes without escapes.
	dir := filepath.ToSlash(t.TempDir())
	missing := dir + "/missing"
	src := `
[project]
name = "acme"

[services.rails]
cmd = "bin/rails s -p ${self.port}"
url = "rails"
cwd = "` + dir + `"
env = { PORT = "" }

[services.gone]
cmd = "true"
cwd = "` + missing + `"
`
	cfg, ds, err := Parse("binky.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := report(ds, nil)
	for _, want := range []string{
		`note: cwd "` + dir + `" is absolute: the service runs there in every world`,
		`note: env PORT = "" unsets $PORT`,
		`error: cwd "` + missing + `" does not exist`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, out)
		}
	}
	if errs, warns := ds.Count(); errs != 1 || warns != 0 {
		t.Errorf("Count() = %d errors, %d warnings; want 1, 0 (notes are neither)", errs, warns)
	}
	rails := cfg.Services["rails"]
	if got := rails.Dir("/wt"); got != dir {
		t.Errorf("Dir = %q; want the absolute cwd %q", got, dir)
	}
	if !rails.UnsetsPort() {
		t.Error("UnsetsPort() = false; want true")
	}
	rel := &Service{Cwd: "web"}
	if got := rel.Dir("/wt"); got != filepath.Join("/wt", "web") {
		t.Errorf("Dir(relative) = %q", got)
	}
	if (&Service{Env: map[string]string{"PORT": "8080"}}).UnsetsPort() {
		t.Error(`UnsetsPort() with PORT = "8080" = true; want false`)
	}
}
