package compose

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/binkyhq/binky/host/config"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtureDirs are the compose projects the two hard rules are checked on:
// testdata/fixtures (with golden files) and, when present, the shared set
// and any directory named by BINKY_COMPOSE_FIXTURES (a hold-out set).
func fixtureDirs(t *testing.T) (golden, extra []string) {
	t.Helper()
	list := func(root string) []string {
		ents, err := os.ReadDir(root)
		if err != nil {
			return nil
		}
		var out []string
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, filepath.Join(root, e.Name()))
			}
		}
		return out
	}
	golden = list(filepath.Join("testdata", "fixtures"))
	if len(golden) == 0 {
		t.Fatal("no fixtures in testdata/fixtures")
	}
	for _, root := range []string{"../../../shared/compose-fixtures", os.Getenv("BINKY_COMPOSE_FIXTURES")} {
		if root != "" {
			extra = append(extra, list(root)...)
		}
	}
	return golden, extra
}

// secretNameRE is the test's own, blunt idea of a secret's name, kept
// apart from secret.go so the test does not grade init by init's rule; a
// name ending in one of placeNameRE's words says where a secret is, or
// how it is passed (AUTH_PROXY_HEADER), not the secret.
var (
	secretNameRE = regexp.MustCompile(`(?i)pass|pwd|secret|token|key|credential|auth|private|dsn|salt|cookie|cert`)
	placeNameRE  = regexp.MustCompile(`(?i)_(file|path|dir|header|name|url)$`)
)

// secrets returns the values a fixture holds that must never reach
// binky.toml: every value of .env (init reads only its names), and each
// value of a service's environment: that has a secret's name, a
// credential in a URL or a planted SENTINEL. The test reads values; init
// reads compose's, and writes only the plain ones.
func secrets(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	if data, err := os.ReadFile(filepath.Join(dir, ".env")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' {
				continue
			}
			if _, v, ok := strings.Cut(line, "="); ok {
				out = append(out, strings.Trim(v, `"'`))
			}
		}
	}
	files, _ := Find(dir)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), "compose") {
			files = append(files, e.Name())
		}
	}
	add := func(name, value string) {
		if secretNameRE.MatchString(name) && !placeNameRE.MatchString(name) || strings.Contains(value, "SENTINEL") ||
			regexp.MustCompile(`://[^/@\s]*:[^/@\s]+@`).MatchString(value) {
			out = append(out, value)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		var doc map[string]any
		_ = yaml.Unmarshal(data, &doc)
		// Services under services:, and at the top level (the first
		// compose format).
		bodies := []any{}
		if svcs, ok := doc["services"].(map[string]any); ok {
			for _, b := range svcs {
				bodies = append(bodies, b)
			}
		}
		for _, b := range doc {
			bodies = append(bodies, b)
		}
		for _, b := range bodies {
			m, ok := b.(map[string]any)
			if !ok {
				continue
			}
			switch env := m["environment"].(type) {
			case map[string]any:
				for k, v := range env {
					if s, ok := v.(string); ok {
						add(k, s)
					}
				}
			case []any:
				for _, v := range env {
					if s, ok := v.(string); ok {
						if k, val, ok := strings.Cut(s, "="); ok {
							add(k, val)
						}
					}
				}
			}
		}
	}
	// Short, ordinary values ("django", "minio", "root") also name
	// things binky writes; the rule is about values that can be secrets.
	var kept []string
	for _, s := range out {
		if len(s) >= 8 && !strings.HasPrefix(s, "${") {
			kept = append(kept, s)
		}
	}
	return kept
}

var todoLine = regexp.MustCompile(`(?m)^# (\[services|cmd = |ports = |url = |depends_on = |health = |env_file = |[A-Za-z_][A-Za-z0-9_]* = ")`)

// uncomment does what the TODOs ask: it uncomments the blocks and writes
// a cmd.
func uncomment(out []byte) []byte {
	out = todoLine.ReplaceAll(out, []byte("$1"))
	return regexp.MustCompile(`(?m)^cmd = .*$`).ReplaceAll(out, []byte(`cmd = "true"`))
}

func render(t *testing.T, dir string) ([]byte, Summary) {
	t.Helper()
	p, err := Load(dir)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	return Render(p, filepath.Base(dir))
}

// TestRules holds init's two hard rules on every fixture: the file passes
// binky check with no errors, and no secret of the fixture reaches it.
func TestRules(t *testing.T) {
	golden, extra := fixtureDirs(t)
	for _, dir := range append(golden, extra...) {
		t.Run(dir, func(t *testing.T) {
			out, _ := render(t, dir)
			_, ds, err := config.Parse("binky.toml", out)
			if err != nil {
				t.Fatalf("config.Parse: %v\n%s", err, out)
			}
			for _, d := range ds {
				if d.Severity == config.SeverityError {
					t.Errorf("binky check error: %s\n%s", d.String(), out)
				}
			}
			// A TODO block, uncommented with its cmd written, is valid too.
			_, ds, err = config.Parse("binky.toml", uncomment(out))
			if err != nil {
				t.Fatalf("config.Parse of the uncommented file: %v", err)
			}
			for _, d := range ds {
				if d.Severity == config.SeverityError {
					t.Errorf("uncommented TODO blocks: binky check error: %s\n%s", d.String(), uncomment(out))
				}
			}
			if bytes.Contains(out, []byte("SENTINEL")) {
				t.Errorf("a sentinel secret reached binky.toml:\n%s", out)
			}
			for _, s := range secrets(t, dir) {
				if bytes.Contains(out, []byte(s)) {
					t.Errorf("the value %q reached binky.toml", s)
				}
			}
		})
	}
}

// TestGolden compares the rendered file of each testdata fixture with
// testdata/golden/<fixture>.toml (go test -update rewrites them).
func TestGolden(t *testing.T) {
	golden, _ := fixtureDirs(t)
	for _, dir := range golden {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			out, _ := render(t, dir)
			path := filepath.Join("testdata", "golden", name+".toml")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run go test -update): %v", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s differs from the golden file %s; got:\n%s", name, path, out)
			}
		})
	}
}

func TestAdapterFor(t *testing.T) {
	tests := []struct{ image, want string }{
		{"postgres:16-alpine", "postgres"},
		{"docker.io/library/postgres:16@sha256:abc", "postgres"},
		{"public.ecr.aws/docker/library/postgres:15", "postgres"},
		{"postgis/postgis:16-3.4", "postgres"},
		{"bitnami/postgresql:16", "postgresql"},
		{"postgres:${PG_VERSION:-16}", "postgres"},
		{"mysql:8.0", "mysql"},
		{"mariadb", "mariadb"},
		{"percona/percona-server:8.0", "percona"},
		{"redis:7.2", "redis"},
		{"bitnami/redis", "redis"},
		{"valkey/valkey:8", "valkey"},
		{"mongo:7", "mongodb"},
		{"minio/minio:RELEASE.2024-06-13T22-53-53Z", "minio"},
		{"quay.io/minio/minio", "minio"},
		{"redpandadata/redpanda:v24.1.7", "redpanda"},
		{"docker.redpanda.com/redpandadata/redpanda", "redpanda"},
		{"confluentinc/cp-kafka:7.6.0", "kafka"},
		{"apache/kafka:3.7.0", "kafka"},
		{"rabbitmq:3-management", "rabbitmq"},
		{"rabbitmq:3.13-management-alpine", "rabbitmq"},
		{"clickhouse/clickhouse-server:24.3", "clickhouse"},
		{"opensearchproject/opensearch:2.13.0", "opensearch"},
		{"docker.elastic.co/elasticsearch/elasticsearch:8.13.0", "elasticsearch"},
		{"qdrant/qdrant:v1.9.2", "qdrant"},
		{"localhost:5000/postgres:16", "postgres"},
		{"ghcr.io/example/ingest:latest", ""},
		{"node:20", ""},
		{"nginx", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := AdapterFor(tt.image); got != tt.want {
			t.Errorf("AdapterFor(%q) = %q; want %q", tt.image, got, tt.want)
		}
	}
}

func TestEnvKeysNeverValues(t *testing.T) {
	dir := t.TempDir()
	env := "A=1\nexport B=two words\n# C=3\n  D = x\n1BAD=y\nE\n"
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := EnvKeys(filepath.Join(dir, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	want := "A,B,D,E"
	if strings.Join(got, ",") != want {
		t.Errorf("EnvKeys = %v; want %s", got, want)
	}
}

func TestProjectName(t *testing.T) {
	for in, want := range map[string]string{
		"storefront": "storefront", "My App": "my-app", "rails_sidekiq": "rails-sidekiq",
		"--": "app", "xn--abc": "app", strings.Repeat("a", 70): strings.Repeat("a", 63),
	} {
		if got := ProjectName(in); got != want {
			t.Errorf("ProjectName(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestNoCompose(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no compose file") {
		t.Errorf("Load of an empty dir: err = %v; want no compose file", err)
	}
}

// TestInitFromASubdirectory (issue 40): with -f docker/compose.yml, the
// env_file compose resolves in docker/ (and its .env) are written from
// the directory binky.toml is in; a URL whose scheme names a driver
// (postgresql+asyncpg) keeps it, built of the slice's parts; no value of
// an env file reaches the output.
func TestInitFromASubdirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const sentinel = "SENTINEL-subdir-9f2"
	files := map[string]string{
		"docker/compose.yml": `services:
  db:
    image: postgres:16
  api:
    build: ..
    env_file: ./api.env
    environment:
      DATABASE_URL: postgresql+asyncpg://app:` + sentinel + `@db:5432/app
      PLAIN_URL: postgres://app:` + sentinel + `@db:5432/app
`,
		"docker/.env":    "POSTGRES_PASSWORD=" + sentinel + "\n",
		"docker/api.env": "API_KEY=" + sentinel + "\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(dir, "docker/compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Render(p, "sub")
	for _, want := range []string{
		`env_file = "docker/.env"`,
		`env_file = "docker/api.env"  # compose's env_file`,
		`DATABASE_URL = "postgresql+asyncpg://${db.user}:${db.password}@${db.host}:${db.port}/${db.database}"`,
		`PLAIN_URL = "${db.url}"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), sentinel) {
		t.Errorf("init output holds a sentinel secret:\n%s", out)
	}
}
