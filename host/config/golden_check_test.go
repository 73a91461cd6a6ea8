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
