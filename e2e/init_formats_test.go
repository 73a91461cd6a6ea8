package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInitFormatsAndLiterals runs binky init on the compose files issue 27
// found wrong: a version "3" file (BullMQ's), a file of compose's first
// format (services at the top level), Miniflux's literal values and an
// app whose variables are read from other names. init exits 0, writes
// the plain values as compose wrote them and each secret as ${env.X} of
// the variable compose reads, prints which variables to provide, and no
// planted secret reaches its output or the file, which binky check
// passes as written and with its TODO blocks filled in.
func TestInitFormatsAndLiterals(t *testing.T) {
	tests := []struct {
		fixture      string
		want         []string // lines of binky.toml
		notWant      []string // anywhere in the file or init's output
		provide      []string // named in "set these …"
		notProvide   []string
		stderrSays   []string
		adapterCount int
	}{
		{
			fixture:      "bullmq-v3",
			want:         []string{`[services.redis]`, `# PORT = "3000"`, `# REDIS_HOST = "${redis.host}"`, `# REDIS_PORT = "${redis.port}"`, `# QUEUE_NAME = "emails"`, `# SMTP_PASSWORD = "${env.SMTP_PASSWORD}"`},
			notProvide:   []string{"PORT", "QUEUE_NAME", "SMTP_PASSWORD"},
			adapterCount: 1,
		},
		{
			fixture:      "redmine-v1",
			want:         []string{`[services.db]`, `# [services.redmine]`, `# RAILS_ENV = "production"`, `# REDMINE_DB_PASSWORD = "${env.REDMINE_DB_PASSWORD}"`},
			provide:      []string{"REDMINE_DB_PASSWORD", "REDMINE_SECRET_KEY_BASE"},
			notProvide:   []string{"RAILS_ENV"},
			stderrSays:   []string{"first format"},
			adapterCount: 1,
		},
		{
			fixture: "miniflux-literals",
			want: []string{`# RUN_MIGRATIONS = "1"`, `# CREATE_ADMIN = "1"`, `# ADMIN_USERNAME = "admin"`, `# DEBUG = "1"`,
				`# ADMIN_PASSWORD = "${env.ADMIN_PASSWORD}"`, `# DATABASE_URL = "${db.url}"`},
			notWant:      []string{"miniflux:secret"},
			provide:      []string{"ADMIN_PASSWORD", "OAUTH2_CLIENT_SECRET"},
			notProvide:   []string{"PORT", "DEBUG", "RUN_MIGRATIONS", "CREATE_ADMIN", "ADMIN_USERNAME"},
			adapterCount: 1,
		},
		{
			fixture:      "s3-secret-ref",
			want:         []string{`# S3_SECRET = "${env.MINIO_PASSWORD}"`, `# S3_BUCKET = "uploads"`, `# PORT = "${self.port}"`},
			notWant:      []string{"${env.S3_SECRET}", "minioadmin"},
			provide:      []string{"MINIO_USER", "LOG_LEVEL"},
			notProvide:   []string{"MINIO_PASSWORD", "S3_SECRET", "PORT"},
			adapterCount: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			e := composeEnv(t, tt.fixture)
			r := e.binky("init")
			if r.code != 0 {
				t.Fatalf("binky init: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			path := filepath.Join(e.repo, "binky.toml")
			file := read(path)
			noSentinel(t, "binky.toml", file)
			noSentinel(t, "init's stdout", r.stdout)
			noSentinel(t, "init's stderr", r.stderr)
			for _, w := range tt.want {
				if !strings.Contains(file, "\n"+w+"\n") {
					t.Errorf("binky.toml has no line %s:\n%s", w, file)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(file+r.stdout+r.stderr, w) {
					t.Errorf("%q is in binky.toml or init's output:\n%s\n%s", w, file, r.stderr)
				}
			}
			provide := ""
			for _, line := range strings.Split(r.stderr, "\n") {
				if _, list, ok := strings.Cut(line, "before binky up: "); ok {
					provide = ", " + list + ","
				}
			}
			for _, v := range tt.provide {
				if !strings.Contains(provide, ", "+v+",") {
					t.Errorf("init does not ask for %s:\n%s", v, r.stderr)
				}
			}
			for _, v := range tt.notProvide {
				if strings.Contains(provide, ", "+v+",") {
					t.Errorf("init asks for %s, which compose gave a plain value or .env defines:\n%s", v, r.stderr)
				}
			}
			for _, s := range tt.stderrSays {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("init's stderr does not say %q:\n%s", s, r.stderr)
				}
			}
			checkClean(t, e)

			r = e.binky("init", "--stdout", "--json")
			var js struct {
				Adapters []json.RawMessage `json:"adapters"`
				TOML     string            `json:"toml"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &js); err != nil || r.code != 0 {
				t.Fatalf("init --stdout --json: exit %d: %v\n%s", r.code, err, r.stdout)
			}
			noSentinel(t, "init --stdout --json", r.stdout+r.stderr)
			if len(js.Adapters) != tt.adapterCount || js.TOML != file {
				t.Errorf("init --json: %d adapters, toml equal %v; want %d and the file", len(js.Adapters), js.TOML == file, tt.adapterCount)
			}

			// The TODO blocks filled in (uncommented, a cmd written) pass too.
			filled := regexp.MustCompile(`(?m)^# (\[services|cmd = |ports = |url = |depends_on = |health = |[A-Za-z_][A-Za-z0-9_]* = ")`).ReplaceAllString(file, "$1")
			filled = regexp.MustCompile(`(?m)^cmd = .*$`).ReplaceAllString(filled, `cmd = "true"`)
			if err := os.WriteFile(path, []byte(filled), 0o644); err != nil {
				t.Fatal(err)
			}
			checkClean(t, e)
		})
	}
}

// TestInitNoServices: a compose file that defines no service (a
// version: line alone, an empty services:, a file of volumes) makes init
// exit non-zero saying so, and write nothing.
func TestInitNoServices(t *testing.T) {
	for name, src := range map[string]string{
		"version only":   "version: \"3\"\n",
		"empty services": "version: \"3\"\nservices: {}\nvolumes:\n  data: {}\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			e := &env{t: t, home: filepath.Join(base, "home"), repo: filepath.Join(base, "repo"), rng: nextRange(10)}
			if err := os.MkdirAll(e.repo, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.repo, "docker-compose.yml"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.repo, ".env"), []byte("TOKEN="+sentinel+"-none\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.git("init", "-q", "-b", "main")
			e.git("add", "-A")
			e.git("commit", "-q", "-m", "compose project")
			t.Cleanup(e.cleanup)
			r := e.binky("init")
			if r.code == 0 {
				t.Errorf("binky init on a compose file with no service: exit 0; want non-zero\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, "no service") || !strings.Contains(r.stderr, "docker-compose.yml") {
				t.Errorf("binky init says %q; want it to say the file defines no service", r.stderr)
			}
			noSentinel(t, "init's output", r.stdout+r.stderr)
			if _, err := os.Stat(filepath.Join(e.repo, "binky.toml")); !os.IsNotExist(err) {
				t.Errorf("init wrote binky.toml for a project with no service (stat: %v)", err)
			}
		})
	}
}
