package tokens

import "strings"

// RenderCmd renders s, a cmd.exe command, for service self. It is the
// Windows twin of RenderShell: each token found in coords becomes a
// delayed-expansion reference to an environment variable that carries its
// value (${self.port} → !BINKY_TOKEN_SELF_PORT!), and Env holds those
// variables. The command must run under `cmd.exe /v:on` (package cmdshell
// builds that command line). cmd.exe expands !VAR! after it has parsed the
// line, so a value is never parsed as cmd syntax: & | < > ^ % " and ! in a
// value are data.
//
//	unquoted      "!VAR!"   (one argument, even with spaces)
//	inside "…"    !VAR!
//
// cmd.exe has no escape inside quotes; outside them ^ escapes the next
// byte, so ^" does not open a quote. A caret directly before a token is
// dropped (it would escape the quote added here). What a program makes of
// its command line is the program's business (most split it as the C
// runtime does); a value holding a double quote cannot be passed through
// that split intact by any quoting, and a value ending in a backslash
// inside quotes escapes the closing quote for such programs. Unknown tokens
// and malformed ${ sequences are copied as written, as in Render. Command
// depends on which tokens were rendered, never on their values.
func RenderCmd(s, self string, coords map[string]string) Shell {
	if !strings.Contains(s, "${") {
		return Shell{Command: s}
	}
	r := shellRenderer{src: s, vars: map[string]string{}}
	r.spans(self, coords)
	if len(r.known) == 0 {
		return Shell{Command: s}
	}
	quoted := false
	for i := 0; i < len(s); {
		if r.k < len(r.known) && r.known[r.k].start == i {
			sp := r.known[r.k]
			r.k++
			v := r.variable(sp)
			if quoted {
				r.out.WriteString("!" + v + "!")
			} else {
				r.out.WriteString(`"!` + v + `!"`)
			}
			i = sp.end
			continue
		}
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
			i += r.copyN(i, 1)
		case c == '^' && !quoted:
			if i+1 < len(s) && r.k < len(r.known) && r.known[r.k].start == i+1 {
				i++ // drop it: it would escape our opening quote
				continue
			}
			i += r.copyN(i, 2)
		default:
			i += r.copyN(i, 1)
		}
	}
	return Shell{Command: r.out.String(), Env: r.env}
}
