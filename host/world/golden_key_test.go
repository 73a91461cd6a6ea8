package world

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goldenKeyConfig = `
[project]
name = "redmine"

[services.db]
adapter    = "postgres"
admin_url  = "${env.PG_ADMIN_URL}"
migrate    = "rake db:migrate"
clone_from = "golden"
inputs     = ["db/migrate/**"]
env        = { REDMINE_INSTANCE = "binky-${worktree.name}", DATABASE_URL = "${self.url}" }
CONFIG
`

// keyOfWorld is goldenKey of service db in a world of worktree name whose
// binky.toml has the config line cfgLine, with the same migration.
func keyOfWorld(t *testing.T, name, cfgLine string) (string, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(root, "db", "migrate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "db", "migrate", "001.rb"), []byte("create_table :issues"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, strings.Replace(goldenKeyConfig, "CONFIG", cfgLine, 1))
	w := &world{
		cfg: cfg, project: "redmine", worktree: name, path: root,
		env:    map[string]string{"PG_ADMIN_URL": "postgres://postgres:pw@127.0.0.1:5432/postgres"},
		slices: map[string]slice{"db": {Address: "postgres://postgres:pw@127.0.0.1:5432/redmine_" + name, Values: map[string]string{"database": "redmine_" + name}}},
	}
	key, tmpl, err := goldenKey(w, cfg.Services["db"], w.coords())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tmpl, "redmine_golden_golden_") || !strings.HasSuffix(tmpl, key.Short()) {
		t.Errorf("template %q; want redmine_golden_golden_<key>", tmpl)
	}
	return key.Sum, tmpl
}

// TestGoldenKeyOfWorld: two worktrees whose clone_from service's env names
// the worktree share one template; turning owner_role on keys another.
func TestGoldenKeyOfWorld(t *testing.T) {
	main, mainTmpl := keyOfWorld(t, "main", "")
	feature, featureTmpl := keyOfWorld(t, "feature-x", "")
	if main != feature || mainTmpl != featureTmpl {
		t.Errorf("worktrees main and feature-x: templates %s and %s; want one", mainTmpl, featureTmpl)
	}
	owner, _ := keyOfWorld(t, "main", "config = { owner_role = true }")
	if owner == main {
		t.Error("owner_role = true kept the key of the template built without it")
	}
	if off, _ := keyOfWorld(t, "main", "config = { owner_role = false }"); off == owner {
		t.Error("owner_role = false keyed like owner_role = true")
	}
}
