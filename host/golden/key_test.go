package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func key(t *testing.T, spec Spec, root string) Key {
	t.Helper()
	k, err := KeyOf(spec, root)
	if err != nil {
		t.Fatalf("KeyOf: %v", err)
	}
	return k
}

func TestKeyFollowsInputs(t *testing.T) {
	spec := Spec{Migrate: "migrate", Seed: "seed", Adapter: "postgres", AdminURL: "postgres://u:pw@db:5432/postgres", Inputs: []string{"db/migrations/**", "db/seed.sql"}}
	a, b := t.TempDir(), t.TempDir()
	for _, root := range []string{a, b} {
		write(t, root, "db/migrations/001_init.sql", "CREATE TABLE a (id int);")
		write(t, root, "db/seed.sql", "INSERT INTO a VALUES (1);")
		write(t, root, "src/main.go", "package main")
	}
	ka, kb := key(t, spec, a), key(t, spec, b)
	if ka.Sum != kb.Sum {
		t.Fatalf("same inputs in two worktrees: keys %s and %s; want equal", ka.Short(), kb.Short())
	}
	if len(ka.Inputs) != 2 {
		t.Errorf("inputs %+v; want the migration and the seed", ka.Inputs)
	}

	// A file outside the inputs does not change the key.
	write(t, b, "src/main.go", "package main // edited")
	if got := key(t, spec, b); got.Sum != ka.Sum {
		t.Errorf("editing a file outside inputs changed the key")
	}

	// A new migration file deep under ** changes it.
	write(t, b, "db/migrations/2024/002_orders.sql", "CREATE TABLE orders (id int);")
	kb = key(t, spec, b)
	if kb.Sum == ka.Sum {
		t.Fatalf("a new migration under db/migrations/2024/ left the key unchanged; ** must cross directories")
	}
	if len(kb.Inputs) != 3 || kb.Inputs[1].Path != "db/migrations/2024/002_orders.sql" {
		t.Errorf("inputs %+v; want three files sorted by path", kb.Inputs)
	}

	// So does changing a migration's content.
	write(t, a, "db/migrations/001_init.sql", "CREATE TABLE a (id bigint);")
	if got := key(t, spec, a); got.Sum == ka.Sum {
		t.Errorf("changing a migration's content left the key unchanged")
	}
}

func TestKeyFields(t *testing.T) {
	root := t.TempDir()
	write(t, root, "m.sql", "x")
	base := Spec{Migrate: "m", Seed: "s", Adapter: "postgres", AdminURL: "postgres://u:one@h:5432/postgres", Inputs: []string{"m.sql"}}
	k0 := key(t, base, root).Sum
	same := base
	same.AdminURL = "postgres://other:two@h:5432/template1?sslmode=disable"
	if key(t, same, root).Sum != k0 {
		t.Errorf("credentials, path or options of the admin URL changed the key; only the server should count")
	}
	for name, mod := range map[string]func(*Spec){
		"migrate": func(s *Spec) { s.Migrate = "m2" },
		"seed":    func(s *Spec) { s.Seed = "s2" },
		"adapter": func(s *Spec) { s.Adapter = "mysql" },
		"server":  func(s *Spec) { s.AdminURL = "postgres://u:one@h:5433/postgres" },
		"inputs":  func(s *Spec) { s.Inputs = nil },
		// migrate "a" + seed "bc" must differ from migrate "ab" + seed "c".
		"boundary": func(s *Spec) { s.Migrate, s.Seed = "ms", "" },
	} {
		s := base
		mod(&s)
		if key(t, s, root).Sum == k0 {
			t.Errorf("changing %s left the key unchanged", name)
		}
	}
}

func TestKeyNoMatch(t *testing.T) {
	root := t.TempDir()
	spec := Spec{Migrate: "m", Inputs: []string{"prisma/migrations/**"}}
	k := key(t, spec, root)
	if len(k.Inputs) != 1 || !k.Inputs[0].NoMatch || k.Inputs[0].Path != "prisma/migrations/**" {
		t.Fatalf("inputs %+v; want the pattern marked no match", k.Inputs)
	}
	// A glob that matches nothing is not the same as no inputs at all,
	// and the first file to appear changes the key.
	if key(t, Spec{Migrate: "m"}, root).Sum == k.Sum {
		t.Errorf("an unmatched glob hashes like no inputs")
	}
	write(t, root, "prisma/migrations/1/migration.sql", "x")
	if key(t, spec, root).Sum == k.Sum {
		t.Errorf("the first matching file left the key unchanged")
	}
}

func TestKeyDirectoryMatch(t *testing.T) {
	root := t.TempDir()
	write(t, root, "db/migrations/a/001.sql", "one")
	spec := Spec{Inputs: []string{"db/migrations"}}
	k := key(t, spec, root)
	if len(k.Inputs) != 1 || k.Inputs[0].Path != "db/migrations/a/001.sql" {
		t.Fatalf("inputs %+v; a glob naming a directory covers the files under it", k.Inputs)
	}
}

func TestKeyBadGlob(t *testing.T) {
	if _, err := KeyOf(Spec{Inputs: []string{"db/[migrations"}}, t.TempDir()); err == nil {
		t.Errorf("a malformed glob gave no error")
	}
}

func TestServer(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://user:secret@127.0.0.1:5432/postgres?sslmode=disable": "postgres://127.0.0.1:5432",
		"":                    "",
		"not a url at all":    "",
		"redis://:pw@h:6379/": "redis://h:6379",
	} {
		if got := Server(in); got != want {
			t.Errorf("Server(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestKeyFollowsEnv: a service's rendered env is part of the key (a
// seed's admin password changed builds a new template), digested, never
// in clear; the service's own tokens stay as written so every world keys
// the same; no env keeps the key it had.
func TestKeyFollowsEnv(t *testing.T) {
	root := t.TempDir()
	spec := Spec{Migrate: "m", Seed: "s", Adapter: "postgres", AdminURL: "postgres://127.0.0.1:5432/"}
	plain, err := KeyOf(spec, root)
	if err != nil {
		t.Fatal(err)
	}
	if EnvSum(nil) != "" {
		t.Error("EnvSum(nil) is not empty")
	}
	coords := map[string]string{"env.ADMIN_PW": "first-pass", "db.url": "postgres://127.0.0.1/acme_wt1", "cache.url": "redis://x/1"}
	env := map[string]string{"ADMIN_PASSWORD": "${env.ADMIN_PW}", "DATABASE_URL": "${self.url}", "SELF": "${db.url}", "CACHE": "${cache.url}"}
	te := TemplateEnv(env, "db", coords)
	if te["ADMIN_PASSWORD"] != "first-pass" || te["DATABASE_URL"] != "${self.url}" || te["SELF"] != "${db.url}" || te["CACHE"] != "redis://x/1" {
		t.Errorf("TemplateEnv = %v", te)
	}
	spec.EnvSum = EnvSum(te)
	first, err := KeyOf(spec, root)
	if err != nil {
		t.Fatal(err)
	}
	if first.Sum == plain.Sum {
		t.Error("an env did not change the key")
	}
	if strings.Contains(spec.EnvSum, "first-pass") {
		t.Error("EnvSum holds a value in clear")
	}
	// Another world: its own slice URL differs, the key does not.
	coords["db.url"] = "postgres://127.0.0.1/acme_wt2"
	spec.EnvSum = EnvSum(TemplateEnv(env, "db", coords))
	if k, _ := KeyOf(spec, root); k.Sum != first.Sum {
		t.Error("the key changed with the world's own slice URL")
	}
	coords["env.ADMIN_PW"] = "second-pass"
	spec.EnvSum = EnvSum(TemplateEnv(env, "db", coords))
	if k, _ := KeyOf(spec, root); k.Sum == first.Sum {
		t.Error("a changed seed password kept the key")
	}
}

// TestKeySharedAcrossWorktrees: a clone_from service's env that names the
// worktree (REDMINE_INSTANCE = "binky-${worktree.name}") keys the same in
// every worktree, its tokens kept as written as ${self.*} are: two
// worktrees with the same inputs share one template.
func TestKeySharedAcrossWorktrees(t *testing.T) {
	env := map[string]string{
		"REDMINE_INSTANCE": "binky-${worktree.name}",
		"FILES":            "${worktree.path}/files",
		"DATABASE_URL":     "${self.url}",
		"SECRET":           "${env.SECRET}",
	}
	keyIn := func(name string) Key {
		root := filepath.Join(t.TempDir(), name)
		write(t, root, "db/migrate/001.rb", "create_table :issues")
		coords := map[string]string{
			"worktree.name": name, "worktree.path": root, "project.name": "redmine",
			"env.SECRET": "s3cret", "db.url": "postgres://127.0.0.1:5432/redmine_" + name,
		}
		te := TemplateEnv(env, "db", coords)
		if te["REDMINE_INSTANCE"] != "binky-${worktree.name}" || te["FILES"] != "${worktree.path}/files" || te["SECRET"] != "s3cret" {
			t.Errorf("TemplateEnv in %s = %v; want worktree tokens as written, others rendered", name, te)
		}
		spec := Spec{Migrate: "rake db:migrate", Adapter: "postgres", AdminURL: "postgres://127.0.0.1:5432/postgres", Inputs: []string{"db/migrate/**"}, EnvSum: EnvSum(te)}
		return key(t, spec, root)
	}
	main, feature := keyIn("main"), keyIn("feature-x")
	if main.Sum != feature.Sum {
		t.Errorf("worktrees main and feature-x: keys %s and %s; want one key", main.Short(), feature.Short())
	}
}

// TestKeyFollowsConfig: the adapter's config is part of the key (owner_role
// decides who owns a clone's tables), digested in a canonical form (the
// order of keys does not matter, nested tables included), rendered as the
// adapter gets it but with the service's and worktree's tokens as written;
// no config keeps the key it had.
func TestKeyFollowsConfig(t *testing.T) {
	root := t.TempDir()
	spec := Spec{Migrate: "m", Adapter: "postgres", AdminURL: "postgres://127.0.0.1:5432/"}
	plain := key(t, spec, root)
	if ConfigSum(nil) != "" || ConfigSum(map[string]any{}) != "" {
		t.Error("ConfigSum of no config is not empty")
	}
	sum := func(cfg map[string]any, coords map[string]string) string {
		return ConfigSum(TemplateConfig(cfg, "db", coords))
	}
	keyWith := func(s string) string {
		sp := spec
		sp.ConfigSum = s
		return key(t, sp, root).Sum
	}
	off := sum(map[string]any{"owner_role": false}, nil)
	on := sum(map[string]any{"owner_role": true}, nil)
	if keyWith(on) == keyWith(off) || keyWith(on) == plain.Sum || keyWith(off) == plain.Sum {
		t.Errorf("owner_role true, false and no config: keys %s, %s, %s; want three", Short(keyWith(on)), Short(keyWith(off)), plain.Short())
	}
	if sp := (Spec{ConfigSum: on}); key(t, sp, root).ConfigSum != on {
		t.Error("Key.ConfigSum is not the spec's")
	}
	// Canonical: the same table written in another order.
	a := map[string]any{"topics": []any{"a", "b"}, "acls": map[string]any{"x": int64(1), "y": "z"}}
	b := map[string]any{"acls": map[string]any{"y": "z", "x": int64(1)}, "topics": []any{"a", "b"}}
	if sum(a, nil) != sum(b, nil) {
		t.Error("the same config in another key order digests differently")
	}
	// Rendered: ${env.*} values count; the world's own slice and
	// worktree do not.
	cfg := map[string]any{"charset": "${env.CHARSET}", "label": "${worktree.name}-${self.database}"}
	c1 := map[string]string{"env.CHARSET": "utf8mb4", "worktree.name": "one", "db.database": "p_one"}
	c2 := map[string]string{"env.CHARSET": "utf8mb4", "worktree.name": "two", "db.database": "p_two"}
	if sum(cfg, c1) != sum(cfg, c2) {
		t.Error("the config digest changed with the worktree or the world's own slice")
	}
	c2["env.CHARSET"] = "latin1"
	if sum(cfg, c1) == sum(cfg, c2) {
		t.Error("a changed ${env.*} value in the config kept the digest")
	}
	if s := sum(map[string]any{"secret": "hunter2"}, nil); strings.Contains(s, "hunter2") {
		t.Error("ConfigSum holds a value in clear")
	}
}
