package config_test

import (
	"os"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/health"
)

// TestHealthTimeoutDefaultsAgree: the config default, the probe's own
// default and the docs name one health timeout.
func TestHealthTimeoutDefaultsAgree(t *testing.T) {
	if health.DefaultTimeout != config.DefaultHealthTimeout {
		t.Errorf("health.DefaultTimeout = %v; want config.DefaultHealthTimeout %v", health.DefaultTimeout, config.DefaultHealthTimeout)
	}
	doc, err := os.ReadFile("../../docs/supervision.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "`timeout` (default " + config.DefaultHealthTimeout.String() + ")"
	want = strings.Replace(want, "1m0s", "60s", 1)
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/supervision.md does not say %s", want)
	}
}

// TestPortRangeOfOnePort: ranges are inclusive, so [41000, 41000] holds
// one port; only a range whose low end is above its high end is empty.
func TestPortRangeOfOnePort(t *testing.T) {
	for _, tc := range []struct {
		rng     string
		wantErr bool
	}{
		{"[41000, 41000]", false},
		{"[41000, 41001]", false},
		{"[41001, 41000]", true},
	} {
		dir := t.TempDir()
		src := "[project]\nname = \"p\"\nport_range = " + tc.rng + "\n[services.a]\ncmd = \"true\"\n"
		if err := os.WriteFile(dir+"/binky.toml", []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, ds, err := config.Load(dir + "/binky.toml")
		gotErr := err != nil || ds.HasErrors()
		if gotErr != tc.wantErr {
			t.Errorf("port_range = %s: error %v %v; want error %v", tc.rng, err, ds, tc.wantErr)
		}
	}
}

// TestExposeWithoutAddress: exposing a cmd service that has no port and
// no url yields nothing, so check says so instead of env dropping it.
func TestExposeWithoutAddress(t *testing.T) {
	src := `[project]
name = "p"

[services.api]
cmd = "serve"
url = "api"

[services.worker]
cmd = "work"

[services.db]
adapter = "sqlite"

[agents]
expose = ["api", "worker", "db"]
`
	_, ds, err := config.Parse("binky.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		if strings.Contains(d.Message, "expose") {
			got = append(got, d.String())
		}
	}
	want := `binky.toml:15: warning: agents.expose names "worker", which has no address`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("expose diagnostics: %q; want one starting %q", got, want)
	}
}
