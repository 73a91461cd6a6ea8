package names_test

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk/names"
)

// branchSet generates branches that fold onto each other as often as real
// ones could: the same words under every separator, case and prefix, plus
// names shaped like hashed names, look-alikes and long names.
func branchSet() []string {
	words := []string{"login", "auth", "api", "db", "ui", "fix", "cache", "search", "billing", "a", "b", "x1",
		"v2", "main", "dev", "golden", "test", "user", "admin", "queue", "worker", "e2e", "ci", "docs"}
	prefixes := []string{"", "feat/", "fix/", "chore/", "user/alice/", "agent-7/", "release/", "Feat/", "feat-", "../"}
	seps := []string{"-", "/", "_", ".", "", " ", "--", "а"}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range prefixes {
		for _, w1 := range words {
			for _, w2 := range words {
				for _, sep := range seps {
					b := p + w1 + sep + w2
					add(b)
					add(strings.ToUpper(b))
					add(strings.ToUpper(b[:1]) + b[1:])
				}
			}
		}
	}
	for _, w := range words {
		add(w)
		add(w + "-" + sha6("feat/"+w))
		add(w + "-1b2c3d")
		add(strings.Repeat(w+"-", 40))
		add(strings.Repeat(w+"/", 40) + "end")
	}
	return out
}

func TestNoCollisions(t *testing.T) {
	branches := branchSet()
	byName := make(map[string]string, len(branches))
	hashCollisions := 0
	for _, b := range branches {
		w := names.Worktree(b)
		if r := checkWorktree(w); r != "" {
			t.Fatalf("Worktree(%q) = %q: %s", b, w, r)
		}
		if other, ok := byName[w]; ok {
			// Only two hashed names with equal 24-bit hashes may meet.
			if w == b || w == other || sha6(b) != sha6(other) {
				t.Fatalf("Worktree(%q) = Worktree(%q) = %q; want different", b, other, w)
			}
			hashCollisions++
			t.Logf("hash collision: %q and %q both give %q", b, other, w)
			continue
		}
		byName[w] = b
	}
	// With 24-bit hashes the expected number of collisions in this set is
	// well under one; more than a few means the hash is not doing its job.
	if hashCollisions > 3 {
		t.Errorf("got %d hash collisions among %d branches; want at most 3", hashCollisions, len(branches))
	}
	t.Logf("%d branches, %d worktree names, %d hash collisions", len(branches), len(byName), hashCollisions)

	slices := map[string]string{}
	addSlice := func(s, from string) {
		if r := checkSlice(s); r != "" {
			t.Fatalf("slice %q of %s: %s", s, from, r)
		}
		if other, ok := slices[s]; ok {
			if !strings.Contains(s, "__") {
				t.Fatalf("%s and %s both give slice %q; want different", from, other, s)
			}
			t.Logf("hash collision: %s and %s both give %q", from, other, s)
			return
		}
		slices[s] = from
	}
	for _, p := range []string{"acme", "my-app", "my"} {
		for w, b := range byName {
			addSlice(names.Slice(p, w), "slice "+p+"/"+w+" ("+b+")")
		}
		for _, c := range []string{"golden", "main", "app-main", "seed-v2"} {
			addSlice(names.Golden(p, c), "golden "+p+"/"+c)
		}
	}

	for _, m := range []struct {
		name string
		f    func(string) string
	}{
		{"Postgres", names.Postgres}, {"MySQL", names.MySQL}, {"Bucket", names.Bucket},
		{"KafkaPrefix", names.KafkaPrefix}, {"Vhost", names.Vhost},
		{"RedisPrefix", names.RedisPrefix}, {"IndexPrefix", names.IndexPrefix},
	} {
		got := make(map[string]string, len(slices))
		for s := range slices {
			o := m.f(s)
			if other, ok := got[o]; ok {
				t.Fatalf("%s(%q) = %s(%q) = %q; want different", m.name, s, m.name, other, o)
			}
			got[o] = s
		}
	}
	t.Logf("%d slice names, each distinct on every backend", len(slices))
}
