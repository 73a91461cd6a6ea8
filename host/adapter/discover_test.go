package adapter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func describes(t *testing.T, dir, mode string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "fake-"+mode+".describes"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "describe\n")
}

// TestCache: a binary is described once, then again only when its size or
// mtime changes; the cache survives a new Host.
func TestCache(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	bin := copyFake(t, dir, "ok")
	list := func() {
		t.Helper()
		h, _ := testHost(t, Options{Home: home}, dir)
		infos, err := h.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != 1 || infos[0].Error != "" {
			t.Fatalf("list: got %+v; want one usable adapter", infos)
		}
	}
	list()
	if got := describes(t, dir, "ok"); got != 1 {
		t.Fatalf("describes after the first list: got %d; want 1", got)
	}
	if _, err := os.Stat(filepath.Join(home, CacheFile)); err != nil {
		t.Fatalf("cache file: %v", err)
	}
	list()
	if got := describes(t, dir, "ok"); got != 1 {
		t.Fatalf("describes after a cached list: got %d; want 1", got)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(bin, later, later); err != nil {
		t.Fatal(err)
	}
	list()
	if got := describes(t, dir, "ok"); got != 2 {
		t.Fatalf("describes after the mtime changed: got %d; want 2", got)
	}
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte{0})
	_ = f.Close()
	if err := os.Chtimes(bin, later, later); err != nil { // same mtime, new size
		t.Fatal(err)
	}
	list()
	if got := describes(t, dir, "ok"); got != 3 {
		t.Fatalf("describes after the size changed: got %d; want 3", got)
	}
}

// TestCorruptCache: an unreadable cache is ignored and rewritten.
func TestCorruptCache(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	installFake(t, dir, "ok")
	if err := os.WriteFile(filepath.Join(home, CacheFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, _ := testHost(t, Options{Home: home}, dir)
	if _, err := h.Find(t.Context(), "fake-ok"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, CacheFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseCache(b); err != nil {
		t.Errorf("cache after rewrite: %v", err)
	}
}

// TestResolveNames covers shadowing (PATH order, then BINKY_HOME/adapters),
// aliases (never over a binary's own name), unusable and missing adapters.
func TestResolveNames(t *testing.T) {
	first, second, home := t.TempDir(), t.TempDir(), t.TempDir()
	homeDir := filepath.Join(home, "adapters")
	if err := os.MkdirAll(homeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	okFirst := installFake(t, first, "ok")
	okSecond := installFake(t, second, "ok")
	okHome := installFake(t, homeDir, "ok")
	aliasBin := installFake(t, second, "alias")
	homeOnly := installFake(t, homeDir, "garbage")
	installFake(t, first, "baddescribe")
	// Not adapters: not executable, or a name with a dot.
	if err := os.WriteFile(filepath.Join(first, Prefix+"plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(okFirst, filepath.Join(first, Prefix+"ok.bak")); err != nil {
		t.Fatal(err)
	}
	h, _ := testHost(t, Options{Home: home}, first, second)

	tests := []struct {
		name string
		want string
	}{
		{name: "fake-ok", want: okFirst},       // PATH order
		{name: "fakealias", want: aliasBin},    // an alias
		{name: "fake-alias", want: aliasBin},   // a binary name
		{name: "fake-garbage", want: homeOnly}, // BINKY_HOME/adapters
	}
	for _, tt := range tests {
		info, err := h.Find(t.Context(), tt.name)
		if err != nil {
			t.Errorf("find %s: %v", tt.name, err)
			continue
		}
		if info.Path != tt.want {
			t.Errorf("find %s: got %s; want %s", tt.name, info.Path, tt.want)
		}
	}

	// fake-alias claims the alias fake-ok, but a binary of that name wins.
	if info, err := h.Find(t.Context(), "fake-ok"); err != nil || info.Path != okFirst {
		t.Errorf("find fake-ok: got %v, %v; want %s (an alias never overrides a name)", info, err, okFirst)
	}

	_, err := h.Find(t.Context(), "fake-baddescribe")
	if err == nil || !strings.Contains(err.Error(), "unusable") {
		t.Errorf("find fake-baddescribe: got %v; want an unusable-adapter error", err)
	}

	_, err = h.Find(t.Context(), "nope")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("find nope: got %v; want ErrNotFound", err)
	}
	for _, w := range []string{"binky-adapter-nope", homeDir, "fake-alias (fakealias, fake-ok)", "fake-ok"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("not-found error %q: want it to contain %q", err, w)
		}
	}

	infos, err := h.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Info{}
	var names []string
	for _, i := range infos {
		byPath[i.Path] = i
		names = append(names, i.Name)
	}
	if got, want := strings.Join(names, " "), "fake-alias fake-baddescribe fake-garbage fake-ok fake-ok fake-ok"; got != want {
		t.Errorf("listed names: got %q; want %q", got, want)
	}
	if got := byPath[okFirst].Shadowed; len(got) != 2 || got[0] != okSecond || got[1] != okHome {
		t.Errorf("shadowed by the PATH winner: got %v; want [%s %s]", got, okSecond, okHome)
	}
	for _, p := range []string{okSecond, okHome} {
		if got := byPath[p].ShadowedBy; got != okFirst {
			t.Errorf("%s shadowed by: got %q; want %q", p, got, okFirst)
		}
	}
	if got := byPath[aliasBin]; strings.Join(got.Tiers, ",") != TierOneShot || !got.Clone || got.Protocol != 1 || got.Implementation != "fake" {
		t.Errorf("alias binary info: got %+v; want tiers oneshot, clone, protocol 1, implementation fake", got)
	}
}
