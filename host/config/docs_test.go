package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/tokens"
)

// TestDocsListEveryKey keeps docs/config.md the reference of binky.toml:
// each table of keys there, marked <!-- keys: NAME -->, lists exactly the
// keys the decoder accepts for that table — none missing, none extra.
func TestDocsListEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatalf("read docs/config.md: %v", err)
	}
	doc := string(data)
	tables := map[string][]string{
		"top": topKeys, "project": projectKeys, "common": commonKeys,
		"cmd": cmdKeys, "adapter": adapterKeys, "health": healthKeys, "agents": agentsKeys, "worktree": worktreeKeys, "profile": profileKeys,
	}
	marker := regexp.MustCompile(`<!-- keys: (\w+) -->`)
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\|")
	found := map[string]bool{}
	for _, m := range marker.FindAllStringSubmatchIndex(doc, -1) {
		name := doc[m[2]:m[3]]
		want, ok := tables[name]
		if !ok {
			t.Errorf("docs/config.md marks a table %q the decoder does not have", name)
			continue
		}
		found[name] = true
		var got []string
		lines := strings.Split(doc[m[1]:], "\n")
		for i, line := range lines[1:] {
			if i > 0 && !strings.HasPrefix(line, "|") {
				break
			}
			if r := row.FindStringSubmatch(line); r != nil {
				got = append(got, r[1])
			}
		}
		for _, k := range want {
			if !slices.Contains(got, k) {
				t.Errorf("docs/config.md table %q is missing the key %s", name, k)
			}
		}
		for _, k := range got {
			if !slices.Contains(want, k) {
				t.Errorf("docs/config.md table %q lists %s, which the decoder does not accept", name, k)
			}
		}
	}
	for name := range tables {
		if !found[name] {
			t.Errorf("docs/config.md has no <!-- keys: %s --> table", name)
		}
	}
	for _, tok := range []string{tokens.WorktreeName, tokens.WorktreePath, tokens.ProjectName, "self.port", "env.NAME"} {
		if !strings.Contains(doc, "${"+tok+"}") {
			t.Errorf("docs/config.md does not mention the token ${%s}", tok)
		}
	}
}
