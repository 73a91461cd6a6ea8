package man

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"
)

// Binky renders binky(1) from the kong model: the synopsis, the global
// flags, then one subsection per verb (hidden ones left out) with its
// arguments and flags. version goes in the footer.
func Binky(app *kong.Application, version string) []byte {
	var b strings.Builder
	header(&b, "binky", "1", "binky "+version, "Binky Manual", "give every git worktree its own running world")
	b.WriteString(".SH SYNOPSIS\n.B binky\n[\\fIflags\\fR] \\fIcommand\\fR [\\fIargs\\fR]\n")
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(escape(app.Help) + "\n.PP\n")
	b.WriteString(`Binky gives each git worktree of a repository its own world: a block of ports, supervised processes, stable \fB<service>.<worktree>.<project>.localhost\fR URLs, and an isolated slice of the database and broker servers already running. A per\-user daemon (\fBbinkyd\fR) does the work; \fBbinky\fR is its command line, and hands some verbs to \fBbinkyd\fR. Adapters are separate programs named \fBbinky\-adapter\-<name>\fR.` + "\n")
	b.WriteString(".SH OPTIONS\n")
	for _, f := range app.Flags {
		flag(&b, f)
	}
	b.WriteString(".SH COMMANDS\n")
	for _, n := range commands(app.Node) {
		command(&b, n)
	}
	b.WriteString(".SH ENVIRONMENT\n")
	b.WriteString(".TP\n.B BINKY_HOME\nThe state directory (default \\fB~/.binky\\fR), as \\fB\\-\\-home\\fR.\n")
	b.WriteString(".TP\n.B NO_COLOR\nPlain output even on a terminal.\n")
	b.WriteString(".TP\n.B PATH\nWhere the caller's adapters are found, before \\fB$BINKY_HOME/adapters\\fR and the system adapter directory \\fB/usr/lib/binky/adapters\\fR.\n")
	b.WriteString(".SH FILES\n")
	b.WriteString(".TP\n.B binky.toml\nThe project's configuration, at the repository root; see \\fBbinky.toml\\fR(5).\n")
	b.WriteString(".TP\n.B ~/.binky\nThe registry (\\fBbinky.db\\fR), \\fBevents.log\\fR, logs, golden templates, certificates and \\fBadapters/\\fR.\n")
	b.WriteString(".TP\n.B /usr/lib/binky/adapters\nAdapters installed by distribution packages.\n")
	b.WriteString(".SH SEE ALSO\n\\fBbinky.toml\\fR(5)\n")
	return []byte(b.String())
}

// commands lists every visible command below n, depth first, in the
// grammar's order.
func commands(n *kong.Node) []*kong.Node {
	var out []*kong.Node
	for _, c := range n.Children {
		if c.Hidden || c.Type != kong.CommandNode {
			continue
		}
		out = append(out, c)
		out = append(out, commands(c)...)
	}
	return out
}

// Commands is every visible command path of app ("up", "adapter test"), for
// tests that check the page names them all.
func Commands(app *kong.Application) []string {
	var out []string
	for _, n := range commands(app.Node) {
		out = append(out, strings.TrimPrefix(n.Path(), app.Name+" "))
	}
	return out
}

// Flags is every visible flag of the command at path (empty: the global
// ones), as --name.
func Flags(app *kong.Application, path string) []string {
	node := app.Node
	if path != "" {
		for _, n := range commands(app.Node) {
			if strings.TrimPrefix(n.Path(), app.Name+" ") == path {
				node = n
			}
		}
	}
	var out []string
	for _, f := range node.Flags {
		if !f.Hidden {
			out = append(out, "--"+f.Name)
		}
	}
	return out
}

func command(b *strings.Builder, n *kong.Node) {
	path := strings.TrimPrefix(n.Path(), "binky ")
	syn := "binky " + path
	if len(n.Children) > 0 && len(n.Positional) == 0 {
		syn += " <command>"
	}
	for _, p := range n.Positional {
		arg := "<" + p.Name + ">"
		if !p.Required {
			arg = "[" + arg + "]"
		}
		if p.IsCumulative() {
			arg += " ..."
		}
		syn += " " + arg
	}
	fmt.Fprintf(b, ".SS %s\n", escape(syn))
	b.WriteString(escape(n.Help) + "\n")
	if n.Detail != "" {
		b.WriteString(".PP\n" + escape(n.Detail) + "\n")
	}
	for _, p := range n.Positional {
		b.WriteString(".TP\n.I " + escape(p.Name) + "\n" + escape(p.Help) + "\n")
	}
	for _, f := range n.Flags {
		flag(b, f)
	}
}

func flag(b *strings.Builder, f *kong.Flag) {
	if f.Hidden {
		return
	}
	b.WriteString(".TP\n")
	name := `\fB\-\-` + escape(f.Name) + `\fR`
	if f.Short != 0 {
		name = `\fB\-` + escape(string(f.Short)) + `\fR, ` + name
	}
	if !f.IsBool() && !f.IsCounter() {
		name += `=\fI` + escape(f.FormatPlaceHolder()) + `\fR`
	}
	b.WriteString(name + "\n")
	help := f.Help
	if f.HasDefault && f.Default != "" && !f.IsBool() {
		help += " (default: " + f.Default + ")"
	}
	if len(f.Envs) > 0 {
		help += " ($" + strings.Join(f.Envs, ", $") + ")"
	}
	b.WriteString(escape(help) + "\n")
}
