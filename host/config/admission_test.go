package config

import (
	"strings"
	"testing"
	"time"
)

func TestAdmissionKeys(t *testing.T) {
	c := mustParse(t, `
[project]
name = "acme"
max_parallel = 2
ram_reserve = 12.5
disk_headroom = 5
wake = true
idle_suspend = "30m"
[services.web]
cmd = "true"
`)
	p := c.Project
	if p.MaxParallel != 2 || p.RAMReserve != 12.5 || p.DiskHeadroom != 5 || !p.Wake || p.IdleSuspend != 30*time.Minute {
		t.Errorf("got %+v", p)
	}
}

func TestAdmissionKeysRefuseBadValues(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`max_parallel = 0`, "project.max_parallel = 0 is outside 1-10000"},
		{`max_parallel = "4"`, "project.max_parallel must be an integer"},
		{`ram_reserve = 100`, "project.ram_reserve = 100 is outside 0-100"},
		{`disk_headroom = -1`, "project.disk_headroom = -1 is not a positive number of GB"},
		{`idle_suspend = 30`, "must be a duration string"},
		{`wake = "yes"`, "wake"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			_, ds, err := Parse("binky.toml", []byte("[project]\nname = \"acme\"\n"+tc.line+"\n[services.web]\ncmd = \"true\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, d := range ds {
				all = append(all, d.String())
			}
			if !ds.HasErrors() || !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Errorf("diagnostics %q; want an error containing %q", all, tc.want)
			}
		})
	}
}
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

// TestAdmissionConnections: [admission] connections and job_connections
// are read, and refused when they are not positive integers or appear in
// [project].
func TestAdmissionConnections(t *testing.T) {
	src := "[project]\nname = \"acme\"\n[admission]\nconnections = 90\njob_connections = 20\n[services.web]\ncmd = \"true\"\n"
	cfg, diags, err := Parse("binky.toml", []byte(src))
	if err != nil || diags.HasErrors() {
		t.Fatalf("parse: %v %v", err, diags)
	}
	if p := cfg.Project; p.Connections != 90 || p.JobConnections != 20 {
		t.Errorf("connections %d, job_connections %d; want 90, 20", p.Connections, p.JobConnections)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"connections = 90", "connections = 0", "admission.connections = 0 is outside 1-100000"},
		{"connections = 90", `connections = "90"`, "admission.connections must be an integer"},
		{"job_connections = 20", "job_connections = -1", "admission.job_connections = -1 is outside 1-100000"},
		{"[admission]\nconnections = 90", "connections = 90\n[admission]", "connections"},
	} {
		_, diags, _ := Parse("binky.toml", []byte(strings.Replace(src, tc.from, tc.to, 1)))
		if !diags.HasErrors() || !strings.Contains(diagText(diags), tc.want) {
			t.Errorf("%s: %v; want an error containing %q", tc.to, diags, tc.want)
		}
	}
}
