package config

import (
	"fmt"
	"runtime"
	"strings"
)

// On Windows binky runs every command with cmd.exe (host/cmdshell), and
// renders tokens for it (tokens.RenderCmd): ${x} becomes one argument
// whatever its value. What it does not do is give sh syntax a meaning
// cmd.exe lacks: sh's rules (single quotes, $NAME, one command per line)
// have no faithful translation into cmd.exe's, and a partial one would run
// a command differently on each platform without telling anyone. Instead
// the constructs cmd.exe reads differently are reported, with file:line
// and the spelling both shells read alike: binky check on Windows (and at
// every load there), binky check --target windows anywhere. A multi-line
// command is an error: cmd.exe /c stops at the first line feed, so the
// rest would silently never run.

// CheckWindows reports, for the binky.toml name whose text is src, each
// command construct cmd.exe reads differently from sh (what binky check
// --target windows adds on another platform; on Windows Load reports them
// itself).
func CheckWindows(name, src string, cfg *Config) Diagnostics {
	if cfg == nil {
		return nil
	}
	d := &decoder{file: name, pos: indexPositions(stripBOM(src))}
	cmdExeFootguns(d, cfg)
	sortDiagnostics(d.diags)
	return d.diags
}

// nativeCmdExe: commands run with cmd.exe on this platform.
const nativeCmdExe = runtime.GOOS == "windows"

// cmdExeFootguns reports every command of c that cmd.exe reads differently
// from sh.
func cmdExeFootguns(d *decoder, c *Config) {
	for _, name := range c.Order {
		s := c.Services[name]
		if s == nil {
			continue
		}
		p := []string{"services", name}
		d.cmdExeCommand(c, join(p, "cmd"), "services."+name+".cmd", s.Cmd, name)
		d.cmdExeCommand(c, join(p, "migrate"), "services."+name+".migrate", s.Migrate, name)
		d.cmdExeCommand(c, join(p, "seed"), "services."+name+".seed", s.Seed, name)
		if s.Health != nil {
			d.cmdExeCommand(c, join(p, "health", "exec"), "services."+name+".health.exec", s.Health.Exec, name)
		}
	}
	for i, v := range c.Agents.Verify {
		d.cmdExeCommand(c, []string{"agents", "verify", elem(i)}, fmt.Sprintf("agents.verify[%d]", i), v, "")
	}
	for i, v := range c.Worktree.Setup {
		d.cmdExeCommand(c, []string{"worktree", "setup", elem(i)}, fmt.Sprintf("worktree.setup[%d]", i), v, "")
	}
}

func (d *decoder) cmdExeCommand(c *Config, path []string, key, command, self string) {
	if command == "" {
		return
	}
	for _, r := range CmdExeReadings(command) {
		hint := "write " + r.Portable + ": sh and cmd.exe read it alike"
		switch r.Kind {
		case ReadingMultiLine:
			d.errorf(path, "join the lines with && (or put them in a script and run that)",
				"%s has %d lines: cmd.exe runs only the first, and would report success without running the rest", key, r.Lines)
		case ReadingSingleQuotedToken:
			d.warnf(path, hint, "%s quotes %s with single quotes: cmd.exe has no single quotes, so the program receives the ' characters too", key, r.Text)
		case ReadingSingleQuoted:
			d.warnf(path, hint, "%s has single-quoted text %s: cmd.exe has no single quotes, so the ' characters reach the program and a space inside splits the argument", key, r.Text)
		case ReadingVariable:
			d.warnf(path, "write "+portableVariable(c, r.Name, self)+": binky renders it for either shell",
				"%s uses %s: cmd.exe does not expand sh's variables, so the program receives the text %s", key, r.Text, r.Text)
		}
	}
}

// portableVariable is the token that stands for the environment variable
// name in a command of service self (self is "" outside a service).
func portableVariable(c *Config, name, self string) string {
	if name == "PORT" && self != "" {
		return "${self.port}"
	}
	for _, svc := range c.Order {
		e := strings.ToUpper(strings.ReplaceAll(svc, "-", "_"))
		switch name {
		case "BINKY_" + e + "_URL":
			return "${" + svc + ".url}"
		case "BINKY_" + e + "_DIRECT_URL":
			return "http://127.0.0.1:${" + svc + ".port}"
		}
	}
	return "${env." + name + "}"
}

// ReadingKind is one construct cmd.exe reads differently from sh.
type ReadingKind int

// The constructs CmdExeReadings finds.
const (
	// ReadingMultiLine: more than one line; cmd.exe /c runs the first.
	ReadingMultiLine ReadingKind = iota + 1
	// ReadingSingleQuotedToken: '${x}'.
	ReadingSingleQuotedToken
	// ReadingSingleQuoted: other single-quoted text ('a b', a path).
	ReadingSingleQuoted
	// ReadingVariable: $NAME or ${NAME}, an sh variable.
	ReadingVariable
)

// Reading is one construct of a command that cmd.exe reads differently
// from sh, and its portable spelling.
type Reading struct {
	Kind ReadingKind
	// Text is the construct as written.
	Text string
	// Name is the variable's name (ReadingVariable).
	Name string
	// Portable is the spelling both shells read alike (empty for
	// ReadingVariable, whose spelling depends on the config).
	Portable string
	// Lines counts the command's lines (ReadingMultiLine).
	Lines int
}

// CmdExeReadings scans command as sh would and returns, in order, each
// construct cmd.exe reads differently: single-quoted text, sh variables
// outside single quotes, and more than one line. Tokens (${a.b}) are
// binky's and read alike on both. A construct sh itself would reject (an
// unclosed quote) ends the scan.
func CmdExeReadings(command string) []Reading {
	var out []Reading
	if t := strings.TrimSpace(command); strings.ContainsAny(t, "\r\n") {
		n := 0
		for _, l := range strings.FieldsFunc(t, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if strings.TrimSpace(l) != "" {
				n++
			}
		}
		if n > 1 {
			out = append(out, Reading{Kind: ReadingMultiLine, Text: command, Lines: n})
		}
	}
	dquoted := false
	for i := 0; i < len(command); {
		c := command[i]
		switch {
		case c == '\\':
			i += 2 // sh: the next byte is literal (outside quotes) or escaped
		case c == '"':
			dquoted = !dquoted
			i++
		case c == '\'' && !dquoted:
			end := strings.IndexByte(command[i+1:], '\'')
			if end < 0 {
				return out
			}
			inner := command[i+1 : i+1+end]
			r := Reading{Kind: ReadingSingleQuoted, Text: command[i : i+2+end], Portable: `"` + inner + `"`}
			if isOneToken(inner) {
				r.Kind = ReadingSingleQuotedToken
			}
			if !strings.Contains(inner, `"`) { // no portable spelling holds both
				out = append(out, r)
			}
			i += end + 2
		case c == '$':
			name, n := shVariable(command[i:])
			if n == 0 {
				i++
				continue
			}
			out = append(out, Reading{Kind: ReadingVariable, Text: command[i : i+n], Name: name})
			i += n
		default:
			i++
		}
	}
	return out
}

// isOneToken reports whether s is exactly one binky token, ${a.b}.
func isOneToken(s string) bool {
	return strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && strings.Count(s, "}") == 1 && strings.Contains(s, ".")
}

// shVariable returns the name and length of the sh variable reference
// ($NAME or ${NAME}) s starts with; n is 0 when s starts with none (a
// binky token ${a.b}, $1, a lone $).
func shVariable(s string) (name string, n int) {
	if strings.HasPrefix(s, "${") {
		end := strings.IndexByte(s, '}')
		if end < 0 || !envNameRE().MatchString(s[2:end]) {
			return "", 0
		}
		return s[2:end], end + 1
	}
	j := 1
	for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || j > 1 && s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j == 1 {
		return "", 0
	}
	return s[1:j], j
}
