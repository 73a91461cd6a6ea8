package main

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/binkyhq/binky/cmd/internal/cli"
)

// The fast path. Building the kong model of the whole grammar costs every
// call more than the rest of the call together (issue 44: three quarters
// of `binky env`'s instructions), and agents call `binky env` and `binky
// status` in loops. So the command lines of the hot verbs that are plain
// (`--version` alone; `env` and `status` with their own flags, --home and,
// for env, one worktree) are read here by hand and run as kong would run
// them; anything else — help, a flag this parser does not know, a flag
// given twice, an empty or dash-led value, `--`, a second argument, text
// that is not UTF-8 — goes
// to kong, so every help text, completion and error is kong's.
// TestFastPathMatchesKong and FuzzFastParse hold the two to the same
// answers.

// fastCall is a command line the fast path runs, with the values kong
// would have filled in.
type fastCall struct {
	verb   string // "version", "env" or "status"
	home   string // --home, else $BINKY_HOME (getenv), as kong's env tag
	env    envCmd
	status statusCmd
}

// parseFast reads args as one of the plain hot command lines; ok is false
// for everything else, which kong parses. getenv supplies BINKY_HOME.
func parseFast(args []string, getenv func(string) string) (c fastCall, ok bool) {
	if len(args) == 1 && args[0] == "--version" {
		return fastCall{verb: "version"}, true
	}
	for _, a := range args {
		if !utf8.ValidString(a) {
			return fastCall{}, false // kong reads it rune by rune, as U+FFFD
		}
	}
	seen := map[string]bool{}
	var positional []string
	// value reads a flag's value, inline (--flag=v) or the next argument.
	value := func(i *int, a, name string) (string, bool) {
		if seen[name] {
			return "", false
		}
		seen[name] = true
		v, inline := strings.CutPrefix(a, "--"+name+"=")
		if !inline {
			if *i+1 >= len(args) {
				return "", false
			}
			*i++
			v = args[*i]
		}
		return v, v != "" && v[0] != '-'
	}
	// flag marks a boolean flag, once.
	flag := func(name string) bool {
		if seen[name] {
			return false
		}
		seen[name] = true
		return true
	}
	home, homeSet := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		var ok bool
		switch {
		case a == "--home" || strings.HasPrefix(a, "--home="):
			home, ok = value(&i, a, "home")
			homeSet = true
		case c.verb == "":
			// The verb comes first, after --home only.
			c.verb, ok = a, a == "env" || a == "status"
		case c.verb == "env" && (a == "--project" || strings.HasPrefix(a, "--project=")):
			c.env.Project, ok = value(&i, a, "project")
		case c.verb == "env" && a == "--json":
			c.env.JSON, ok = true, flag("json")
		case c.verb == "env" && a == "--dotenv":
			c.env.Dotenv, ok = true, flag("dotenv")
		case c.verb == "env" && a == "--direct":
			c.env.Direct, ok = true, flag("direct")
		case c.verb == "status" && a == "--json":
			c.status.JSON, ok = true, flag("json")
		case a == "" || a[0] == '-':
			// Help, --version, --, or a flag kong knows better.
		default:
			positional = append(positional, a)
			ok = c.verb == "env" && len(positional) == 1
		}
		if !ok {
			return fastCall{}, false
		}
	}
	if c.verb == "" {
		return fastCall{}, false
	}
	c.env.Worktree = strings.Join(positional, "")
	if !homeSet {
		home = getenv("BINKY_HOME")
	}
	c.home = home
	return c, true
}

// runFast runs a parsed hot command line as cli.Main runs a verb: under
// the signal context, with the home resolved, its error printed and
// turned into the exit status.
func runFast(c fastCall) int {
	if c.verb == "version" {
		// kong's VersionFlag: the version on stdout, exit status 0.
		fmt.Println(cli.Version())
		return 0
	}
	ctx, stop := cli.Signals()
	defer stop()
	g := &globals{ctx: ctx, home: cli.HomeDir(c.home)}
	switch c.verb {
	case "env":
		return cli.ExitCode(c.env.Run(g))
	case "status":
		return cli.ExitCode(c.status.Run(g))
	}
	panic("binky: fast path for unknown verb " + c.verb)
}
