package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/remote"
)

// completionCmd prints a shell's completion script. The scripts call back
// `binky __complete`, which completes from the kong model (verbs, flags,
// enum values) and, when a daemon runs, from the live worlds (worktree,
// branch, service and project names).
type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

func (c *completionCmd) Run(g *globals) error {
	script, ok := completionScripts[c.Shell]
	if !ok {
		return fmt.Errorf("completion: no script for %q (bash, zsh or fish)", c.Shell)
	}
	_, err := fmt.Print(script)
	return err
}

// completionScripts install `binky __complete` as the completer. Each
// passes the words after `binky` up to the cursor, the word being
// completed last (empty when the cursor follows a space).
var completionScripts = map[string]string{
	"bash": `# binky completion for bash: add to ~/.bashrc
#   source <(binky completion bash)
_binky_complete() {
	local IFS=$'\n'
	COMPREPLY=($(binky __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _binky_complete binky
`,
	"zsh": `#compdef binky
# binky completion for zsh: add to ~/.zshrc
#   source <(binky completion zsh)
_binky_complete() {
	local -a cands
	cands=("${(@f)$(binky __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	cands=(${cands:#})
	compadd -a cands
}
compdef _binky_complete binky
`,
	"fish": `# binky completion for fish: save as ~/.config/fish/completions/binky.fish
#   binky completion fish > ~/.config/fish/completions/binky.fish
complete -c binky -f -a '(binky __complete -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
}

// completeCmd is the hidden callback of the completion scripts.
type completeCmd struct {
	Words []string `arg:"" optional:"" passthrough:"" help:"The words after binky; the last is the one being completed."`
}

func (c *completeCmd) Run(g *globals, app *kong.Context) error {
	live := &liveNames{home: g.home}
	timeout := completionTimeout
	// --host among the words (before the one being completed), else
	// BINKY_HOST: the names are the host's, asked over the same road as
	// its verbs, never prompting; an unreachable host gives none.
	if name := completionHost(c.Words, g.host); name != "" {
		if name == remote.Any {
			return nil
		}
		r, err := openRemote(g.home, name)
		if err != nil {
			return nil
		}
		r.Batch = true
		live.client, timeout = remoteClient(r), remoteCompletionTimeout
	}
	ctx, cancel := context.WithTimeout(g.ctx, timeout)
	defer cancel()
	live.ctx = ctx
	for _, s := range complete(app.Model.Node, c.Words, live) {
		fmt.Println(s)
	}
	return nil
}

// completionTimeout bounds the daemon call a completion makes: a shell
// waits for it on every tab.
const completionTimeout = 500 * time.Millisecond

// remoteCompletionTimeout bounds the same call to a host's daemon: one
// ssh session on the shared connection, or a handshake when there is none.
const remoteCompletionTimeout = 2 * time.Second

// completionHost is the host a completion asks: --host NAME among words
// before the last (the one being completed), else host (BINKY_HOST, or
// --host before __complete).
func completionHost(words []string, host string) string {
	if len(words) > 0 {
		words = words[:len(words)-1]
	}
	if len(words) > 0 && words[0] == "--" {
		words = words[1:] // the scripts' separator, kept by kong
	}
	name, _, _ := hostFlag(words, func(string) string { return host })
	return name
}

// names is what completion asks about the live worlds.
type names interface {
	// worlds lists the worlds (of project, when set).
	worlds(project string) []api.World
	// world is the one world name (or, empty, the caller's directory)
	// names.
	world(name, project string) *api.World
}

// complete returns the candidates for the last of words, given the
// words before it, from the command tree under root.
func complete(root *kong.Node, words []string, live names) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	node := root
	var positional []string
	flags := map[string]string{}
	var pending *kong.Flag // a flag waiting for its value
	for _, w := range before {
		if pending != nil {
			flags[pending.Name] = w
			pending = nil
			continue
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			f := findFlag(node, name)
			switch {
			case f == nil || f.IsBool() || f.IsCounter():
			case hasValue:
				flags[f.Name] = value
			default:
				pending = f
			}
			continue
		}
		if len(positional) == 0 {
			if child := findChild(node, w); child != nil {
				node = child
				continue
			}
		}
		positional = append(positional, w)
	}
	var out []string
	switch {
	case pending != nil:
		out = flagValues(pending, flags, live)
	case strings.HasPrefix(cur, "-"):
		for n := node; n != nil; n = n.Parent {
			for _, f := range n.Flags {
				if !f.Hidden {
					out = append(out, "--"+f.Name)
				}
			}
		}
	case len(positional) == 0 && hasCommands(node):
		for _, ch := range node.Children {
			if ch.Type == kong.CommandNode && !ch.Hidden {
				out = append(out, ch.Name)
			}
		}
	case len(positional) < len(node.Positional):
		out = positionalValues(node.Positional[len(positional)], positional, flags, live)
	case len(node.Positional) > 0 && node.Positional[len(node.Positional)-1].Name == "services":
		// SERVICE… takes as many as the world has.
		out = positionalValues(node.Positional[len(node.Positional)-1], positional, flags, live)
	}
	var kept []string
	for _, s := range out {
		if strings.HasPrefix(s, cur) {
			kept = append(kept, s)
		}
	}
	sort.Strings(kept)
	return slices.Compact(kept)
}

func findChild(n *kong.Node, name string) *kong.Node {
	for _, ch := range n.Children {
		if ch.Type == kong.CommandNode && (ch.Name == name || slices.Contains(ch.Aliases, name)) {
			return ch
		}
	}
	return nil
}

func hasCommands(n *kong.Node) bool {
	for _, ch := range n.Children {
		if ch.Type == kong.CommandNode {
			return true
		}
	}
	return false
}

func findFlag(n *kong.Node, name string) *kong.Flag {
	for ; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if f.Name == name || (len(name) == 1 && f.Short == rune(name[0])) {
				return f
			}
		}
	}
	return nil
}

func enumValues(v *kong.Value) []string {
	if v.Enum == "" {
		return nil
	}
	var out []string
	for _, e := range strings.Split(v.Enum, ",") {
		out = append(out, strings.TrimSpace(e))
	}
	return out
}

func flagValues(f *kong.Flag, flags map[string]string, live names) []string {
	if e := enumValues(f.Value); e != nil {
		return e
	}
	if f.Name == "project" {
		var out []string
		for _, w := range live.worlds("") {
			out = append(out, w.Project)
		}
		return out
	}
	return nil
}

// positionalValues completes one positional argument by its name: a
// worktree or branch from the live worlds, a service of the world the
// previous argument (or the current directory) names.
func positionalValues(p *kong.Positional, before []string, flags map[string]string, live names) []string {
	if e := enumValues(p); e != nil {
		return e
	}
	switch p.Name {
	case "worktree", "branch":
		var out []string
		for _, w := range live.worlds(flags["project"]) {
			out = append(out, w.Worktree, w.Branch)
		}
		return out
	case "service", "services":
		name := ""
		switch {
		case p.Name == "services" && len(before) > 0:
			name = before[0] // restart, stop, start: WORKTREE SERVICE…
		case len(before) > 0:
			name = before[len(before)-1]
		}
		w := live.world(name, flags["project"])
		if w == nil {
			return nil
		}
		var out []string
		for _, s := range w.Services {
			out = append(out, s.Name)
		}
		return out
	}
	return nil
}

// liveNames asks the daemon of home, when one runs; it never starts one.
// With client set, it asks that daemon instead (a host's, over ssh).
type liveNames struct {
	ctx    context.Context
	home   string
	client *api.Client
}

func (l *liveNames) status(args api.StatusArgs) []api.World {
	c := l.client
	if c == nil {
		if _, err := os.Stat(api.Socket(l.home)); err != nil {
			return nil
		}
		c = &api.Client{Home: l.home}
	}
	var res api.StatusResult
	if err := c.Call(l.ctx, api.OpStatus, args, api.Handlers{}, &res); err != nil {
		return nil
	}
	return res.Worlds
}

func (l *liveNames) worlds(project string) []api.World {
	var out []api.World
	for _, w := range l.status(api.StatusArgs{}) {
		if project == "" || w.Project == project {
			out = append(out, w)
		}
	}
	return out
}

func (l *liveNames) world(name, project string) *api.World {
	if l.client != nil && name == "" {
		return nil // this directory is not the host's
	}
	wd, _ := os.Getwd()
	if l.client != nil {
		wd = ""
	}
	ws := l.status(api.StatusArgs{WorldRef: api.WorldRef{Name: name, Dir: wd, Project: project}, Here: name == ""})
	if len(ws) != 1 {
		return nil
	}
	return &ws[0]
}
