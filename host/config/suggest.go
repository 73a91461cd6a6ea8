package config

import (
	"slices"
	"strings"
)

// Suggest returns the candidate closest to got when one is close enough to
// be a likely typo (case, '-' for '_', a known alias, or a couple of
// edits), else "": the "did you mean" of binky.toml's keys, for other
// files Binky reads strictly (hosts.toml).
func Suggest(got string, candidates []string) string { return suggest(got, candidates) }

// suggest is Suggest.
func suggest(got string, candidates []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	g := norm(got)
	for _, c := range candidates {
		if c != got && norm(c) == g {
			return c
		}
	}
	for _, a := range aliases() {
		if slices.Contains(candidates, a[1]) && (g == a[0] || len(g) > 4 && distance(g, a[0]) <= 1) {
			return a[1]
		}
	}
	best, bestDist := "", 0
	for _, c := range candidates {
		if c == got {
			continue
		}
		d := distance(g, norm(c))
		limit := 2
		if len(c) <= 4 {
			limit = 1
		}
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean is a hint suggesting the closest candidate, or fallback.
func didYouMean(got string, candidates []string, fallback string) string {
	if s := suggest(got, candidates); s != "" {
		return "did you mean " + quote(s) + "?"
	}
	return fallback
}

// distance is the optimal-string-alignment edit distance (insertions,
// deletions, substitutions and adjacent transpositions), on bytes.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 99
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// quote writes s in double quotes, escaping only what must be.
func quote(s string) string { return `"` + oneLine(s) + `"` }

// aliases lists words people reach for and the key each means.
func aliases() [][2]string {
	return [][2]string{
		{"command", "cmd"},
		{"run", "cmd"},
		{"depends", "depends_on"},
		{"dependencies", "depends_on"},
		{"requires", "depends_on"},
		{"after", "depends_on"},
		{"environment", "env"},
		{"port", "ports"},
		{"healthcheck", "health"},
		{"health_check", "health"},
		{"dir", "cwd"},
		{"workdir", "cwd"},
		{"working_dir", "cwd"},
		{"service", "services"},
		{"agent", "agents"},
		{"exposed", "expose"},
		{"adaptor", "adapter"},
		{"admin", "admin_url"},
		{"migration", "migrate"},
		{"migrations", "migrate"},
		{"seeds", "seed"},
		{"clone", "clone_from"},
		{"template", "clone_from"},
		{"hostname", "url"},
		{"host", "url"},
		{"signal", "stop_signal"},
		{"dotenv", "env_file"},
	}
}
