package names_test

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/sdk/names"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/: path traversal, shell
// metacharacters, Cyrillic and fullwidth look-alikes, NUL, invalid UTF-8,
// hash-shaped names and 300-byte names. `go test` runs them; fuzz longer
// with `go test -fuzz=FuzzWorktree -fuzztime=1m ./sdk/names`.

func FuzzWorktree(f *testing.F) {
	f.Fuzz(func(t *testing.T, branch string) {
		got := names.Worktree(branch)
		if r := checkWorktree(got); r != "" {
			t.Fatalf("Worktree(%q) = %q: %s", branch, got, r)
		}
		if again := names.Worktree(branch); again != got {
			t.Fatalf("Worktree(%q) = %q then %q; want the same", branch, got, again)
		}
		plain := reWorktree.MatchString(branch) && len(branch) <= 63 && !reHashTail.MatchString(branch) &&
			!isDevice(branch)
		if plain && got != branch {
			t.Fatalf("Worktree(%q) = %q; want it unchanged", branch, got)
		}
		if !plain && !strings.HasSuffix(got, "-"+sha6(branch)) {
			t.Fatalf("Worktree(%q) = %q; want it to end -%s", branch, got, sha6(branch))
		}
		if !names.IsWorktree(got) {
			t.Fatalf("IsWorktree(Worktree(%q) = %q) = false; want true", branch, got)
		}
		if l := names.Label(got); l != got {
			t.Fatalf("Label(%q) = %q; want it unchanged", got, l)
		}
		if l := names.Label(branch); checkLabel(l) != "" {
			t.Fatalf("Label(%q) = %q: %s", branch, l, checkLabel(l))
		}
		if h := names.Host(branch, got, branch); checkHost(h) != "" {
			t.Fatalf("Host(%q, %q, %q) = %q: %s", branch, got, branch, h, checkHost(h))
		}
		for _, s := range []string{names.Slice("acme", got), names.Slice(branch, branch), names.Golden("acme", branch)} {
			if r := checkSlice(s); r != "" {
				t.Fatalf("slice %q of branch %q: %s", s, branch, r)
			}
			checkBackends(t, s)
		}
		checkBackends(t, branch)
	})
}

func FuzzWorktreePair(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string) {
		wa, wb := names.Worktree(a), names.Worktree(b)
		if a == b || wa != wb {
			return
		}
		// Equal names for different branches are allowed only as a true
		// 24-bit hash collision between two hashed names.
		if wa == a || wb == b || sha6(a) != sha6(b) {
			t.Fatalf("Worktree(%q) = Worktree(%q) = %q; want different", a, b, wa)
		}
		t.Logf("hash collision: %q and %q both give %q", a, b, wa)
	})
}

func FuzzSlicePair(f *testing.F) {
	f.Fuzz(func(t *testing.T, p1, w1, p2, w2 string) {
		outs := []struct {
			name, p, w string
			golden     bool
		}{
			{names.Slice(p1, w1), p1, w1, false},
			{names.Slice(p2, w2), p2, w2, false},
			{names.Golden(p1, w1), p1, w1, true},
			{names.Golden(p2, w2), p2, w2, true},
		}
		for _, o := range outs {
			if r := checkSlice(o.name); r != "" {
				t.Fatalf("slice %q of (%q, %q): %s", o.name, o.p, o.w, r)
			}
		}
		for i := range outs {
			for j := i + 1; j < len(outs); j++ {
				a, b := outs[i], outs[j]
				if a.name != b.name || (a.p == b.p && a.w == b.w && a.golden == b.golden) {
					continue
				}
				// Only two hashed names whose hash tails agree may meet.
				if !strings.Contains(a.name, "__") || !strings.Contains(b.name, "__") {
					t.Fatalf("(%q, %q, golden %v) and (%q, %q, golden %v) both give %q", a.p, a.w, a.golden, b.p, b.w, b.golden, a.name)
				}
				t.Logf("hash collision: %q", a.name)
			}
		}
		checkDistinct(t, outs[0].name, outs[1].name)
		checkDistinct(t, outs[0].name, outs[2].name)
	})
}

func FuzzBackendPair(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string) {
		checkBackends(t, a)
		checkBackends(t, b)
		if names.IsSlice(a) && names.IsSlice(b) {
			checkDistinct(t, a, b)
		}
	})
}

// checkDistinct checks that two different slice names get different names
// on every backend, and prefixes that never start each other's keys.
func checkDistinct(t *testing.T, a, b string) {
	t.Helper()
	if a == b {
		return
	}
	for _, m := range []struct {
		name   string
		f      func(string) string
		prefix bool
		norm   func(string) string
	}{
		{"Postgres", names.Postgres, false, nil},
		{"MySQL", names.MySQL, false, nil},
		{"Bucket", names.Bucket, false, nil},
		{"Vhost", names.Vhost, false, nil},
		// Kafka refuses a topic that equals another once '.' is read as '_'.
		{"KafkaPrefix", names.KafkaPrefix, true, func(s string) string { return strings.ReplaceAll(s, ".", "_") }},
		{"RedisPrefix", names.RedisPrefix, true, nil},
		{"IndexPrefix", names.IndexPrefix, true, nil},
	} {
		ma, mb := m.f(a), m.f(b)
		if ma == mb {
			t.Fatalf("%s(%q) = %s(%q) = %q; want different", m.name, a, m.name, b, ma)
		}
		if !m.prefix {
			continue
		}
		if m.norm != nil {
			ma, mb = m.norm(ma), m.norm(mb)
		}
		if strings.HasPrefix(ma, mb) || strings.HasPrefix(mb, ma) {
			t.Fatalf("%s of %q (%q) and of %q (%q): one starts the other", m.name, a, ma, b, mb)
		}
	}
}

func isDevice(s string) bool {
	switch s {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(s) == 4 && (s[:3] == "com" || s[:3] == "lpt") && s[3] >= '0' && s[3] <= '9'
}

// FuzzWorktreeAmong: the name a new world gets is always a valid worktree
// name; the short form is the fold when usable; two branches that fold
// alike, both present, never get the same name.
func FuzzWorktreeAmong(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string) {
		short := names.WorktreeShort(a)
		if r := checkWorktree(short); r != "" {
			t.Fatalf("WorktreeShort(%q) = %q: %s", a, short, r)
		}
		branches := []string{a, b}
		na := names.WorktreeAmong(a, branches, nil)
		if r := checkWorktree(na); r != "" {
			t.Fatalf("WorktreeAmong(%q) = %q: %s", a, na, r)
		}
		// b's world holds its name; a's new world must not take it.
		nb := names.WorktreeAmong(b, branches, nil)
		held := func(n string) (string, bool) { return b, n == nb }
		if a != b {
			if got := names.WorktreeAmong(a, branches, held); got == nb && !strings.HasSuffix(got, "-"+sha6(a)) {
				t.Fatalf("WorktreeAmong(%q) = %q, the name of %q's world", a, got, b)
			}
		}
	})
}
