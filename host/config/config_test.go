package config

import (
	"reflect"
	"testing"
	"time"
)

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, ds, err := Parse("binky.toml", []byte(src))
	if err != nil || ds.HasErrors() {
		t.Fatalf("Parse: %v %v", err, ds)
	}
	return c
}

func TestStartOrder(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want [][]string
	}{
		{"independent", `[project]
name = "a"
[services.b]
cmd = "x"
[services.a]
cmd = "x"`, [][]string{{"b", "a"}}},
		{"chain and diamond", `[project]
name = "a"
[services.web]
cmd = "x"
depends_on = ["api", "auth"]
[services.api]
cmd = "x"
depends_on = ["db"]
[services.auth]
cmd = "x"
depends_on = ["db"]
[services.db]
adapter = "postgres"
[services.cache]
adapter = "redis"`, [][]string{{"db", "cache"}, {"api", "auth"}, {"web"}}},
		{"no services", `[project]
name = "a"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := Parse("binky.toml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.StartOrder(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

// TestStartOrderCycle: a config with a cycle is an error, and StartOrder
// still lists every service once, the cycle last.
func TestStartOrderCycle(t *testing.T) {
	c, ds, err := Parse("binky.toml", []byte(`[project]
name = "a"
[services.a]
cmd = "x"
depends_on = ["b"]
[services.b]
cmd = "x"
depends_on = ["a"]
[services.c]
cmd = "x"`))
	if err != nil || !ds.HasErrors() {
		t.Fatalf("got %v %v; want a cycle error", err, ds)
	}
	want := [][]string{{"c"}, {"a", "b"}}
	if got := c.StartOrder(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
}

func TestPortNames(t *testing.T) {
	c := mustParse(t, `[project]
name = "a"
[services.both]
cmd = "x"
url = "both"
ports = ["web", "admin"]
[services.url]
cmd = "x"
url = "u"
[services.none]
cmd = "x"
[services.db]
adapter = "postgres"
admin_url = "${env.PG_ADMIN_URL}"`)
	tests := []struct {
		svc     string
		want    []string
		adapter bool
	}{
		{"both", []string{"web", "admin"}, false},
		{"url", []string{"http"}, false},
		{"none", nil, false},
		{"db", nil, true},
	}
	for _, tt := range tests {
		s := c.Services[tt.svc]
		if got := s.PortNames(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s.PortNames() = %v; want %v", tt.svc, got, tt.want)
		}
		if got := s.IsAdapter(); got != tt.adapter {
			t.Errorf("%s.IsAdapter() = %v; want %v", tt.svc, got, tt.adapter)
		}
	}
	// PortNames returns a copy.
	c.Services["both"].PortNames()[0] = "changed"
	if c.Services["both"].Ports[0] != "web" {
		t.Errorf("PortNames shares the Ports slice")
	}
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, `[project]
name = "a"
[services.api]
cmd = "x"
health = "http://localhost/"
[services.db]
adapter = "postgres"
admin_url = "${env.PG_ADMIN_URL}"`)
	api := c.Services["api"]
	if api.Restart != "on-failure" || api.StopTimeout != 10*time.Second {
		t.Errorf("got restart %q stop_timeout %v; want on-failure 10s", api.Restart, api.StopTimeout)
	}
	if h := api.Health; h == nil || h.Timeout != 60*time.Second || h.Interval != 500*time.Millisecond {
		t.Errorf("got health %+v; want timeout 60s interval 500ms", h)
	}
	if c.Project.PortRange != [2]int{} {
		t.Errorf("got port_range %v; want zero", c.Project.PortRange)
	}
	if c.Services["db"].Timeout != 0 {
		t.Errorf("got adapter timeout %v; want 0", c.Services["db"].Timeout)
	}
}

func TestLineAndEnvNames(t *testing.T) {
	c := mustParse(t, `[project]
name = "a"
env_file = "${env.HOME}/.env"

[services.api]
cmd = "x ${env.B} ${env.A} ${env.bad-name}"
env = { X = "${env.A}" }
[services.db]
adapter = "postgres"
admin_url = "${env.PG_ADMIN_URL}"
config = { nested = ["${env.C}"] }
[agents]
verify = ["${env.D}"]`)
	if got := c.Line("services", "api", "cmd"); got != 6 {
		t.Errorf("Line(services.api.cmd) = %d; want 6", got)
	}
	if got := c.Line("services", "db", "nope"); got != 8 {
		t.Errorf("Line of a missing key = %d; want its table's line 8", got)
	}
	want := []string{"A", "B", "C", "D", "HOME", "PG_ADMIN_URL"}
	if got := c.EnvNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("EnvNames() = %v; want %v", got, want)
	}
	if got := EnvNames(c); !reflect.DeepEqual(got, want) {
		t.Errorf("EnvNames(c) = %v; want %v", got, want)
	}
	var zero Config
	if got := zero.Line("project"); got != 0 {
		t.Errorf("Line on an unparsed Config = %d; want 0", got)
	}
}

func TestLiteralCredential(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"postgres://postgres:hunter2@localhost:5432/db", true},
		{"postgres://postgres@localhost:5432/db", false},
		{"postgres://postgres:@localhost/db", false},
		{"postgres://${env.U}:${env.P}@localhost/db", false},
		{"postgres://u:${env.P}x@localhost/db", true},
		{"${env.PG_ADMIN_URL}", false},
		{"redis://:secret@localhost:6379/0", true},
		{"redis://localhost:6379/0", false},
		{"http://localhost:8080/a:b@c", false},
		{"amqp://guest:guest@localhost:5672/", true},
		{"host=localhost password=hunter2 dbname=x", true},
		{"host=localhost password=${env.PW}", false},
		{"host=localhost password='' dbname=x", false},
		{"root:pw@tcp(127.0.0.1:3306)/db", true},
		{"root@tcp(127.0.0.1:3306)/db", false},
		{"psql postgres://a:b@h/x && echo ok", true},
		{"", false},
	}
	for _, tt := range tests {
		if got := literalCredential(tt.in) != ""; got != tt.want {
			t.Errorf("literalCredential(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestSecretName(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"PASSWORD", true}, {"DB_PASSWORD", true}, {"STRIPE_API_KEY", true}, {"apiKey", true},
		{"JWT_SECRET", true}, {"GITHUB_TOKEN", true}, {"AWS_SECRET_ACCESS_KEY", true}, {"clientSecret", true},
		{"TOKEN_FILE", false}, {"PASSWORD_FILE", false}, {"KEY_PREFIX", false}, {"PORT", false},
		{"MONKEY", false}, {"NODE_ENV", false}, {"TOKENIZER", false}, {"SECRET_NAME", false},
	}
	for _, tt := range tests {
		if got := secretName(tt.in); got != tt.want {
			t.Errorf("secretName(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	keys := serviceKeys
	tests := []struct{ in, want string }{
		{"comand", "cmd"}, {"command", "cmd"}, {"depends-on", "depends_on"}, {"dependson", "depends_on"},
		{"Adapter", "adapter"}, {"helth", "health"}, {"stop_timout", "stop_timeout"}, {"adaptor", "adapter"},
		{"banana", ""}, {"x", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, keys); got != tt.want {
			t.Errorf("suggest(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestDiagnosticString(t *testing.T) {
	d := Diagnostic{File: "binky.toml", Line: 3, Col: 2, Severity: SeverityError, Message: "m", Hint: "h"}
	if got, want := d.String(), "binky.toml:3: error: m (h)"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	d.Hint, d.Severity = "", SeverityWarning
	if got, want := d.String(), "binky.toml:3: warning: m"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	if (Diagnostics{d}).HasErrors() {
		t.Errorf("HasErrors of a warning = true; want false")
	}
}

func TestOutsideWorktree(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"web", false}, {"./web/../api", false}, {"web/**", false}, {"..", true}, {"a/../../b", true},
		{"/etc", true}, {`C:\x`, true}, {"~/x", true}, {`..\x`, true},
	}
	for _, tt := range tests {
		if got := outsideWorktree(tt.in); got != tt.want {
			t.Errorf("outsideWorktree(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}
