package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// kongParse parses args with the whole grammar, as runKong does, and
// returns the grammar kong filled and the command it chose ("" when kong
// would exit or fail instead of running a verb).
func kongParse(t testing.TB, args []string) (g grammar, command string) {
	t.Helper()
	parser, err := kong.New(&g, kong.Name("binky"), kong.Vars{"version": "test"},
		kong.Exit(func(int) { panic(exitCalled{}) }), kong.Writers(discard{}, discard{}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitCalled); !ok {
				panic(r)
			}
			command = ""
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		return g, ""
	}
	return g, kctx.Command()
}

type exitCalled struct{}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// sameAsKong fails t unless kong, given args, runs the verb parseFast
// chose with the same values.
func sameAsKong(t testing.TB, args []string, c fastCall) {
	t.Helper()
	g, cmd := kongParse(t, args)
	verb, _, _ := strings.Cut(cmd, " ")
	if verb != c.verb {
		t.Fatalf("args %q: fast path runs %q; kong runs %q", args, c.verb, cmd)
	}
	if g.Home != c.home {
		t.Errorf("args %q: fast path home %q; kong's %q", args, c.home, g.Home)
	}
	if !reflect.DeepEqual(g.Env, c.env) || !reflect.DeepEqual(g.Status, c.status) {
		t.Errorf("args %q: fast path env %#v status %#v; kong's env %#v status %#v", args, c.env, c.status, g.Env, g.Status)
	}
}

// TestParseFast: the hot command lines take the fast path with kong's
// values; everything else is left to kong.
func TestParseFast(t *testing.T) {
	t.Setenv("BINKY_HOME", "/from/env")
	fast := [][]string{
		{"env"},
		{"env", "wt"},
		{"env", "feat/a", "--json"},
		{"env", "--dotenv", "wt"},
		{"env", "--direct", "--project", "shop", "wt"},
		{"env", "--project=shop", "--dotenv", "--direct", "--json"},
		{"--home", "/h", "env", "wt"},
		{"--home=/h", "env"},
		{"env", "wt", "--home", "/h"},
		{"env", "status"}, // a worktree named status
		{"status"},
		{"status", "--json"},
		{"--home", "/h", "status", "--json"},
		{"status", "--home=/h"},
	}
	for _, args := range fast {
		c, ok := parseFast(args, func(k string) string { return map[string]string{"BINKY_HOME": "/from/env"}[k] })
		if !ok {
			t.Errorf("parseFast(%q) left it to kong; want the fast path", args)
			continue
		}
		sameAsKong(t, args, c)
	}
	if c, ok := parseFast([]string{"--version"}, nil); !ok || c.verb != "version" {
		t.Errorf("parseFast(--version) = %+v, %v; want the version", c, ok)
	}

	slow := [][]string{
		nil,
		{"--help"},
		{"-h"},
		{"env", "--help"},
		{"env", "-h"},
		{"status", "--help"},
		{"env", "--version"},
		{"--version", "env"},
		{"--home", "/h", "--version"},
		{"env", "--bogus"},
		{"env", "-x"},
		{"env", "a", "b"},
		{"env", "--", "wt"},
		{"env", "-"},
		{"env", "--project"},
		{"env", "--project", "--json"},
		{"env", "--project="},
		{"env", "--project", ""},
		{"env", "--project", "a", "--project", "b"},
		{"env", "--json", "--json"},
		{"env", "--json=true"},
		{"env", "--home"},
		{"env", "--home", "-"},
		{"--home", "/a", "--home", "/b", "status"},
		{"status", "wt"},
		{"status", "--project", "p"},
		{"status", "--dotenv"},
		{"envv"},
		{"up", "wt"},
		{"__complete", "--", "env", ""},
		{"completion", "bash"},
		{""},
	}
	for _, args := range slow {
		if c, ok := parseFast(args, func(string) string { return "" }); ok {
			t.Errorf("parseFast(%q) = %+v; want it left to kong", args, c)
		}
	}
}

// FuzzFastParse: whatever command line the fast path takes, kong runs the
// same verb with the same values. The words are NUL-separated.
func FuzzFastParse(f *testing.F) {
	for _, s := range []string{
		"env", "env\x00wt", "env\x00--json\x00wt", "status\x00--json", "--home\x00/h\x00env",
		"env\x00--project=p\x00--direct", "env\x00--project\x00p\x00--dotenv", "status\x00--home=/x",
		"env\x00-h", "env\x00--\x00x", "--version",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		t.Setenv("BINKY_HOME", "/from/env")
		args := strings.Split(line, "\x00")
		c, ok := parseFast(args, func(k string) string { return map[string]string{"BINKY_HOME": "/from/env"}[k] })
		if !ok || c.verb == "version" {
			return
		}
		sameAsKong(t, args, c)
	})
}
