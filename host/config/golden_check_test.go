package config_test

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/config"
)

// diagsAbout parses src and returns the diagnostics whose message holds
// about, as check prints them.
func diagsAbout(t *testing.T, src, about string) []string {
	t.Helper()
	_, ds, err := config.Parse("binky.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		if strings.Contains(d.Message, about) {
			got = append(got, d.String())
		}
	}
	return got
}

// TestSliceTargetAcceptsParts: a migrate or seed that receives its slice
// as parts (${self.host}, ${self.database}…), in its command or its env,
// knows which slice it fills as well as one given ${self.url}; one given
// neither draws the warning.
func TestSliceTargetAcceptsParts(t *testing.T) {
	for _, tc := range []struct {
		name, svc string
		warn      bool
	}{
		{"url in the command", `migrate = "migrate --db ${self.url}"`, false},
		{"url in env", `migrate = "migrate"` + "\n" + `env = { DATABASE_URL = "${self.url}" }`, false},
		{"parts in the command", `migrate = "psql -h ${self.host} -p ${self.port} -U ${self.user} -d ${self.database} -f schema.sql"`, false},
		{"parts in env", `migrate = "psql -f schema.sql"` + "\n" + `env = { PGHOST = "${self.host}", PGPORT = "${self.port}", PGDATABASE = "${self.database}" }`, false},
		{"parts by the service's name", `seed = "seed --name ${db.database}"`, false},
		{"seed with parts in env", `seed = "bin/seed"` + "\n" + `env = { DB_NAME = "${self.database}" }`, false},
		{"nothing of the slice", `migrate = "pnpm prisma migrate deploy"`, true},
		{"a project token only", `migrate = "migrate ${project.name}"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "[project]\nname = \"acme\"\n\n[services.db]\nadapter = \"postgres\"\nadmin_url = \"${env.PG_ADMIN_URL}\"\n" + tc.svc + "\n"
			got := diagsAbout(t, src, "cannot know which slice")
			if (len(got) > 0) != tc.warn {
				t.Errorf("slice-target warnings %q; want warning %v", got, tc.warn)
			}
		})
	}
}

// TestGoldenPerWorldWarning: check warns, at the line, about a value in a
// clone_from service's env or config that enters its golden key and
// differs in each world (another service's port or slice), and about
// nothing that keys the same everywhere: the service's own slice, the
// worktree's tokens (kept as written in the key), ${env.*}, nested config,
// migrate and seed (which enter as written), a service without
// clone_from, and a server run per world (its admin_url names one).
func TestGoldenPerWorldWarning(t *testing.T) {
	const head = `[project]
name = "shop"

[services.web]
cmd = "serve --port ${self.port}"
url = "web"

[services.cache]
adapter = "redis"
admin_url = "${env.REDIS_ADMIN_URL}"

[services.pg]
cmd = "postgres -p ${self.port}"
ports = ["pg"]

[services.db]
adapter = "postgres"
`
	const golden = "admin_url = \"${env.PG_ADMIN_URL}\"\nclone_from = \"golden\"\ninputs = [\"db/**\"]\n"
	for _, tc := range []struct {
		name, svc string
		want      []string
	}{
		{"another service's port in env", golden + `env = { HOOK = "http://127.0.0.1:${web.port}/hook", DATABASE_URL = "${self.url}" }`,
			[]string{`binky.toml:21: warning: ${web.port} in services.db.env.HOOK differs in each world and enters the golden key of services.db: every worktree would build its own template`}},
		{"another slice in config", golden + `config = { label = "${cache.url}" }`,
			[]string{`binky.toml:21: warning: ${cache.url} in services.db.config.label differs in each world`}},
		{"worktree, self, env and project tokens", golden + `env = { INSTANCE = "${project.name}-${worktree.name}", FILES = "${worktree.path}/files", DATABASE_URL = "${db.url}", LOCALE = "${env.LOCALE}" }` + "\nconfig = { owner_role = true }", nil},
		{"migrate and seed enter as written", golden + `migrate = "migrate --db ${self.url} --hook http://127.0.0.1:${web.port}"`, nil},
		{"no clone_from", "admin_url = \"${env.PG_ADMIN_URL}\"\n" + `env = { HOOK = "${web.port}" }`, nil},
		{"a server per world", "admin_url = \"postgres://postgres@127.0.0.1:${pg.port}/postgres\"\nclone_from = \"golden\"\ninputs = [\"db/**\"]\n" + `env = { HOOK = "${web.port}" }`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := diagsAbout(t, head+tc.svc+"\n", "differs in each world")
			if len(got) != len(tc.want) {
				t.Fatalf("per-world warnings %q; want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("warning %q; want it to start %q", got[i], w)
				}
			}
		})
	}
}
