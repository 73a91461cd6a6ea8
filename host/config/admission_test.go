package config

import (
	"strings"
	"testing"
)

func TestAdmissionTable(t *testing.T) {
	src := `
[project]
name = "acme"

[admission]
max_parallel = 2
jobs = 3
ram_reserve = 15

[services.web]
cmd = "sleep 1"
url = "web"
`
	cfg, diags, err := Parse("binky.toml", []byte(src))
	if err != nil || diags.HasErrors() {
		t.Fatalf("parse: %v %v", err, diags)
	}
	p := cfg.Project
	if p.MaxParallel != 2 || p.Jobs != 3 || p.RAMReserve != 15 {
		t.Errorf("project %+v; want max_parallel 2, jobs 3, ram_reserve 15", p)
	}
	_, diags, _ = Parse("binky.toml", []byte(strings.Replace(src, "jobs = 3", "jobs = 0", 1)))
	if !diags.HasErrors() || !strings.Contains(diagText(diags), "admission.jobs = 0 is outside 1-10000") {
		t.Errorf("jobs = 0: %v; want an error", diags)
	}
}

// wake = true with no url service can never wake anything: check warns.
func TestWakeWithoutURLWarns(t *testing.T) {
	src := `
[project]
name = "acme"
wake = true

[services.worker]
cmd = "sleep 1"
`
	_, diags, err := Parse("binky.toml", []byte(src))
	if err != nil || diags.HasErrors() {
		t.Fatalf("parse: %v %v", err, diags)
	}
	if !strings.Contains(diagText(diags), "wake = true, but no service has a url") {
		t.Errorf("diagnostics %q; want the wake warning", diagText(diags))
	}
	_, diags, _ = Parse("binky.toml", []byte(src+"url = \"w\"\n"))
	if strings.Contains(diagText(diags), "wake = true") {
		t.Errorf("warned with a url service: %q", diagText(diags))
	}
}

func diagText(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}
