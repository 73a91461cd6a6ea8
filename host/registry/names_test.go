package registry

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitemigration"
)

// TestClaimStableName: worlds are handed the first free name in order, keep
// it across claims, the whole set taken names the holders, and a removed
// world's name goes to the next one.
func TestClaimStableName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	set := []string{"app", "app2"}
	mk := func(project, name string) *Worktree {
		w, err := r.UpsertWorktree(ctx, &Worktree{Project: project, Name: name, Branch: name})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	a, b, c := mk("acme", "a"), mk("acme", "b"), mk("acme", "c")
	other := mk("beta", "x")
	for _, tt := range []struct {
		w    *Worktree
		want string
	}{{a, "app"}, {a, "app"}, {b, "app2"}, {other, "app"}} {
		if got, err := r.ClaimStableName(ctx, tt.w.ID, set); err != nil || got != tt.want {
			t.Errorf("ClaimStableName(%s/%s) = %q, %v; want %q", tt.w.Project, tt.w.Name, got, err, tt.want)
		}
	}
	_, err := r.ClaimStableName(ctx, c.ID, set)
	var te *TakenError
	if !errors.As(err, &te) || !errors.Is(err, ErrNameTaken) || !strings.Contains(err.Error(), "app (acme/a)") || !strings.Contains(err.Error(), "app2 (acme/b)") {
		t.Errorf("a third world with the set taken: %v; want a TakenError naming acme/a and acme/b", err)
	}
	if got, _ := r.WorktreeByID(ctx, b.ID); got.StableName != "app2" {
		t.Errorf("StableName read back = %q; want app2", got.StableName)
	}
	if err := r.DeleteWorktree(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ClaimStableName(ctx, c.ID, set); err != nil || got != "app" {
		t.Errorf("after a's remove, c got %q, %v; want app", got, err)
	}
	if got, err := r.ClaimStableName(ctx, c.ID, nil); err != nil || got != "" {
		t.Errorf("an empty set gave %q, %v; want the name cleared", got, err)
	}
}

// TestClaimStableNameConcurrent: many worlds claiming at once each get a
// different name.
func TestClaimStableNameConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	set := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	var ids []int64
	for _, n := range set {
		w, err := r.UpsertWorktree(ctx, &Worktree{Project: "acme", Name: "w" + n, Branch: n})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	got := make([]string, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := r.ClaimStableName(ctx, id, set)
			if err != nil {
				t.Error(err)
			}
			got[i] = n
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("two worlds got %q: %v", n, got)
		}
		seen[n] = true
	}
}

// TestClaimHosts: a world's hostnames are its own across projects; a claim
// of another world's name fails naming it and changes nothing; a new claim
// replaces the world's set; remove frees them.
func TestClaimHosts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	a, _ := r.UpsertWorktree(ctx, &Worktree{Project: "acme", Name: "a", Branch: "a"})
	b, _ := r.UpsertWorktree(ctx, &Worktree{Project: "beta", Name: "b", Branch: "b"})
	if err := r.ClaimHosts(ctx, a.ID, map[string]string{"web.x.test": "web", "api.x.test": "api"}); err != nil {
		t.Fatal(err)
	}
	err := r.ClaimHosts(ctx, b.ID, map[string]string{"web.x.test": "site", "b.x.test": "b"})
	if !errors.Is(err, ErrNameTaken) || !strings.Contains(err.Error(), "web.x.test (acme/a, service web)") {
		t.Errorf("claim of acme/a's name: %v; want it refused naming acme/a", err)
	}
	if hs, _ := r.Hosts(ctx, b.ID); len(hs) != 0 {
		t.Errorf("a refused claim left %v", hs)
	}
	if err := r.ClaimHosts(ctx, a.ID, map[string]string{"web.y.test": "web"}); err != nil {
		t.Fatal(err)
	}
	if err := r.ClaimHosts(ctx, b.ID, map[string]string{"web.x.test": "site"}); err != nil {
		t.Errorf("a name a world let go of: %v; want it free", err)
	}
	if err := r.DeleteWorktree(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.ClaimHosts(ctx, a.ID, map[string]string{"web.x.test": "web"}); err != nil {
		t.Errorf("a removed world's name: %v; want it free", err)
	}
}

// TestClaimNamesOneTransaction: a claim of a stable name and hostnames
// whose hostname another world holds is refused whole: the world gets no
// stable name, and the name is free for the next world.
func TestClaimNamesOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := newRegistry(t)
	mk := func(project, name string) *Worktree {
		w, err := r.UpsertWorktree(ctx, &Worktree{Project: project, Name: name, Branch: name})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	holder, a, b := mk("beta", "h"), mk("acme", "a"), mk("acme", "b")
	if err := r.ClaimHosts(ctx, holder.ID, map[string]string{"app.test": "web"}); err != nil {
		t.Fatal(err)
	}
	set := []string{"app", "app2"}
	hostsOf := func(stable string) (map[string]string, error) {
		return map[string]string{stable + ".test": "web"}, nil
	}
	_, err := r.ClaimNames(ctx, a.ID, set, hostsOf)
	if !errors.Is(err, ErrNameTaken) || !strings.Contains(err.Error(), "app.test (beta/h, service web)") {
		t.Fatalf("ClaimNames onto beta/h's hostname: %v; want it refused naming beta/h", err)
	}
	if got, _ := r.WorktreeByID(ctx, a.ID); got.StableName != "" {
		t.Errorf("a refused claim left acme/a the stable name %q; want none", got.StableName)
	}
	if hs, _ := r.Hosts(ctx, a.ID); len(hs) != 0 {
		t.Errorf("a refused claim left acme/a the hostnames %v", hs)
	}
	// hosts' own error refuses the claim too.
	if _, err := r.ClaimNames(ctx, a.ID, set, func(string) (map[string]string, error) { return nil, errors.New("bad label") }); err == nil || !strings.Contains(err.Error(), "bad label") {
		t.Errorf("ClaimNames with a failing hosts: %v; want its error", err)
	} else if got, _ := r.WorktreeByID(ctx, a.ID); got.StableName != "" {
		t.Errorf("a claim whose hostnames failed left the stable name %q", got.StableName)
	}
	// The next world gets the first name, and its hostname.
	if got, err := r.ClaimNames(ctx, b.ID, set, func(stable string) (map[string]string, error) {
		return map[string]string{stable + ".b.test": "web"}, nil
	}); err != nil || got != "app" {
		t.Errorf("next world: ClaimNames = %q, %v; want app", got, err)
	}
	if hs, _ := r.Hosts(ctx, b.ID); hs["app.b.test"] != "web" {
		t.Errorf("next world's hostnames %v; want app.b.test", hs)
	}
}

// TestMigrateFromVersion9: a registry at schema 9 opens with its worlds
// kept, none holding a stable name or hostname.
func TestMigrateFromVersion9(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	conn, err := sqlite.OpenConn(path, openFlags)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitemigration.Migrate(ctx, conn, sqlitemigration.Schema{AppID: AppID, Migrations: migrations()[:9]}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, `INSERT INTO worktrees (id, project, name, branch, state, selection, created_at, updated_at) VALUES (1, 'shop', 'main', 'main', 'down', '{"only":["web"]}', 1, 2);`)
	r, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of schema 9: %v", err)
	}
	defer r.Close()
	wt, err := r.Worktree(ctx, "shop", "main")
	if err != nil || wt.StableName != "" || wt.Selection != `{"only":["web"]}` {
		t.Fatalf("worktree after migration = %+v, %v; want it kept with no stable name", wt, err)
	}
	if n, err := r.ClaimStableName(ctx, 1, []string{"app"}); err != nil || n != "app" {
		t.Errorf("claim on the migrated row = %q, %v", n, err)
	}
}
