package tokens

import (
	"reflect"
	"testing"
)

func TestRender(t *testing.T) {
	coords := map[string]string{
		"api.port":       "41001",
		"api.ports.http": "41001",
		"api.ports.grpc": "41002",
		"api.url":        "http://api.feat-x.acme.localhost",
		"api.host":       "127.0.0.1",
		"db.url":         "postgresql://localhost/acme_feat_x",
		"db.prefix":      "acme:feat-x:",
		"env.PG_URL":     "postgres://localhost",
		"worktree.name":  "feat-x",
		"worktree.path":  "/src/acme-feat-x",
		"project.name":   "acme",
		"empty":          "",
		"loop":           "${loop}",
	}
	tests := []struct {
		name, in, self, want string
	}{
		{"plain", "no tokens here", "api", "no tokens here"},
		{"self port", "--port ${self.port}", "api", "--port 41001"},
		{"self named port", "${self.ports.grpc}", "api", "41002"},
		{"other service", "DATABASE_URL=${db.url}", "api", "DATABASE_URL=postgresql://localhost/acme_feat_x"},
		{"adapter value", "${db.prefix}jobs", "api", "acme:feat-x:jobs"},
		{"env", "${env.PG_URL}/x", "", "postgres://localhost/x"},
		{"fixed", "${project.name}-${worktree.name} at ${worktree.path}", "", "acme-feat-x at /src/acme-feat-x"},
		{"adjacent", "${api.host}:${api.port}", "", "127.0.0.1:41001"},
		{"unknown left alone", "${vault.secret} and ${api.nope}", "api", "${vault.secret} and ${api.nope}"},
		{"self of a service without that coord", "${self.port}", "worker", "${self.port}"},
		{"self without a self", "${self.port}", "", "${self.port}"},
		{"empty value", "[${empty}]", "", "[]"},
		{"not re-scanned", "${loop}", "", "${loop}"},
		{"malformed open", "${api.port", "", "${api.port"},
		{"malformed empty", "${}", "", "${}"},
		{"malformed space", "${ api.port }", "", "${ api.port }"},
		{"malformed dots", "${api..port} ${.api} ${api.}", "", "${api..port} ${.api} ${api.}"},
		{"nested finds inner", "${a${api.port}}", "", "${a41001}"},
		{"dollar runs", "$$${api.port}$", "", "$$41001$"},
		{"shell vars untouched", "$PORT ${PORT:-3000} $(pwd)", "", "$PORT ${PORT:-3000} $(pwd)"},
		{"unicode around", "→${api.port}←", "", "→41001←"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.in, tt.self, coords); got != tt.want {
				t.Errorf("Render(%q, %q) = %q; want %q", tt.in, tt.self, got, tt.want)
			}
		})
	}
}

func TestRefs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"plain", nil},
		{"${self.port} ${env.PG_URL} ${self.port}", []string{"self.port", "env.PG_URL", "self.port"}},
		{"${a${b}} ${} ${c", []string{"b"}},
		{"${PORT:-1} ${x-y_z.0}", []string{"x-y_z.0"}},
	}
	for _, tt := range tests {
		if got := Refs(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Refs(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestCoordNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{Port("api"), "api.port"},
		{NamedPort("api", "grpc"), "api.ports.grpc"},
		{URL("api"), "api.url"},
		{Host("api"), "api.host"},
		{Value("db", "prefix"), "db.prefix"},
		{EnvVar("PG_URL"), "env.PG_URL"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q; want %q", tt.got, tt.want)
		}
	}
	c := map[string]string{}
	AddPorts(c, "api", []string{"http", "grpc", "extra"}, []int{41001, 41002})
	want := map[string]string{"api.port": "41001", "api.ports.http": "41001", "api.ports.grpc": "41002"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("AddPorts = %v; want %v", c, want)
	}
	if got := Render("${self.port}/${self.ports.grpc}", "api", c); got != "41001/41002" {
		t.Errorf("rendering AddPorts coords = %q; want 41001/41002", got)
	}
}

type strs []string

func (s strs) TokenStrings() []string { return s }

func TestEnvNames(t *testing.T) {
	src := strs{"${env.B} ${env.A}", "", "${env.A}${env.1X}${env.a.b}${env}", "${self.url} ${env.C_2}"}
	want := []string{"A", "B", "C_2"}
	if got := EnvNames(src); !reflect.DeepEqual(got, want) {
		t.Errorf("EnvNames = %v; want %v", got, want)
	}
}
