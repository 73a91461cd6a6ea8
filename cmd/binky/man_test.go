package main

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/binkyhq/binky/cmd/internal/man"
)

// TestManEveryVerbAndFlag: binky(1) names every verb of the grammar and
// every flag of each, so the page cannot drift from the parser.
func TestManEveryVerbAndFlag(t *testing.T) {
	var g grammar
	p, err := kong.New(&g, kong.Name("binky"), kong.Vars{"version": "test"})
	if err != nil {
		t.Fatal(err)
	}
	page := strings.NewReplacer(`\-`, "-", `\fB`, "", `\fR`, "", `\fI`, "").Replace(string(man.Binky(p.Model, "test")))
	verbs := man.Commands(p.Model)
	if len(verbs) < 20 {
		t.Fatalf("got %d verbs; want the whole grammar", len(verbs))
	}
	// Each verb's section runs from its .SS line to the next one; the
	// global flags are in OPTIONS, before COMMANDS.
	sections := map[string]string{}
	head, cmds, _ := strings.Cut(page, ".SH COMMANDS\n")
	sections[""] = head
	for _, s := range strings.Split(cmds, ".SS binky ")[1:] {
		line, _, _ := strings.Cut(s, "\n")
		for _, v := range verbs {
			if line == v || strings.HasPrefix(line, v+" <") || strings.HasPrefix(line, v+" [") {
				sections[v] = s
			}
		}
	}
	for _, v := range append([]string{""}, verbs...) {
		sec, ok := sections[v]
		if !ok {
			t.Errorf("binky(1) has no section for %q", v)
			continue
		}
		for _, f := range man.Flags(p.Model, v) {
			if !strings.Contains(sec, f) {
				t.Errorf("binky(1) lacks the flag %s of %q", f, v)
			}
		}
	}
	for _, hidden := range []string{".SS binky __complete", ".SS binky __man"} {
		if strings.Contains(page, hidden) {
			t.Errorf("binky(1) shows a hidden verb: %s", hidden)
		}
	}
}
