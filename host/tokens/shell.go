package tokens

import (
	"strconv"
	"strings"
)

// ShellVarPrefix begins the name of every variable RenderShell passes a
// token's value through: ${self.port} travels as BINKY_TOKEN_SELF_PORT.
const ShellVarPrefix = "BINKY_TOKEN_"

// Shell is a command rendered for `sh -c`: Command names each token's value
// through a variable instead of containing it, and Env holds those
// variables as KEY=value, to be added to the shell's environment.
type Shell struct {
	Command string
	Env     []string
}

// RenderShell renders s, a POSIX shell command, for service self. Each token
// found in coords becomes a reference to an environment variable that
// carries its value, quoted for the shell context the token sits in, so a
// value is never executed and never word-split:
//
//	unquoted, in $(…) or `…`   "${VAR}"
//	inside "…"                 ${VAR}
//	inside '…'                 '"${VAR}"'   (close, insert, reopen)
//	inside $((…))              ${VAR}       (arithmetic does not split)
//
// A backslash directly before a token would escape the quoting added here;
// outside double quotes it is dropped, inside them it stays a literal
// backslash (what the shell made of it when values were pasted in).
// Unknown tokens and malformed ${ sequences are copied as written, as in
// Render. Command depends on which tokens were rendered, never on their
// values.
func RenderShell(s, self string, coords map[string]string) Shell {
	if !strings.Contains(s, "${") {
		return Shell{Command: s}
	}
	r := shellRenderer{src: s, vars: map[string]string{}, stack: []shellFrame{{kind: shPlain}}}
	r.spans(self, coords)
	if len(r.known) == 0 {
		return Shell{Command: s}
	}
	r.run()
	return Shell{Command: r.out.String(), Env: r.env}
}

// shellCtx is a quoting context of the POSIX shell language.
type shellCtx int

const (
	shPlain    shellCtx = iota // unquoted, at top level
	shSubst                    // unquoted, inside $( … )
	shDouble                   // inside " … "
	shSingle                   // inside ' … '
	shBacktick                 // inside ` … `
	shArith                    // inside $(( … ))
	shComment                  // after # up to the end of the line
)

type shellFrame struct {
	kind  shellCtx
	depth int // parentheses opened inside a $( or $(( frame
}

// span is one token of the source that Render would replace.
type span struct {
	start, end int
	name       string // as written, e.g. "self.port"
	value      string
}

type shellRenderer struct {
	src   string
	known []span
	out   strings.Builder
	stack []shellFrame
	vars  map[string]string // token name as written → variable
	taken map[string]bool
	env   []string
	k     int // the next known span to reach
}

// spans finds the tokens Render would replace, in order.
func (r *shellRenderer) spans(self string, coords map[string]string) {
	off := 0
	for {
		start, end, name, ok := next(r.src[off:])
		if !ok {
			return
		}
		if v, found := lookup(name, self, coords); found {
			r.known = append(r.known, span{start: off + start, end: off + end, name: name, value: v})
		}
		off += end
	}
}

// variable returns the variable that carries a token, defining it on first
// use: BINKY_TOKEN_ and the name upper-cased with anything outside
// [A-Z0-9] as _, numbered when two names fold to one.
func (r *shellRenderer) variable(sp span) string {
	if v, ok := r.vars[sp.name]; ok {
		return v
	}
	if r.taken == nil {
		r.taken = map[string]bool{}
	}
	base := ShellVarPrefix + foldName(sp.name)
	v := base
	for n := 2; r.taken[v]; n++ {
		v = base + "_" + strconv.Itoa(n)
	}
	r.taken[v] = true
	r.vars[sp.name] = v
	r.env = append(r.env, v+"="+sp.value)
	return v
}

func foldName(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

func (r *shellRenderer) top() *shellFrame { return &r.stack[len(r.stack)-1] }

func (r *shellRenderer) push(k shellCtx) { r.stack = append(r.stack, shellFrame{kind: k}) }

func (r *shellRenderer) pop() {
	if len(r.stack) > 1 {
		r.stack = r.stack[:len(r.stack)-1]
	}
}

// run copies the source, lexing its quoting, and replaces each known token
// by a reference fitting the context it is in.
func (r *shellRenderer) run() {
	s := r.src
	atToken := func(i int) bool { return r.k < len(r.known) && r.known[r.k].start == i }
	wordStart := true // for #: only a word's first byte starts a comment
	for i := 0; i < len(s); {
		if atToken(i) {
			sp := r.known[r.k]
			r.k++
			r.reference(sp)
			i = sp.end
			wordStart = false
			continue
		}
		c := s[i]
		f := r.top()
		switch f.kind {
		case shPlain, shSubst:
			switch {
			case c == '\\':
				if i+1 < len(s) && atToken(i+1) {
					i++ // drop it: it would escape our opening quote
					continue
				}
				i += r.copyN(i, 2)
			case c == '\'':
				r.push(shSingle)
				i += r.copyN(i, 1)
			case c == '"':
				r.push(shDouble)
				i += r.copyN(i, 1)
			case c == '`':
				r.push(shBacktick)
				i += r.copyN(i, 1)
			case c == '#' && wordStart:
				r.push(shComment)
				i += r.copyN(i, 1)
			case strings.HasPrefix(s[i:], "$(("):
				r.push(shArith)
				i += r.copyN(i, 3)
			case strings.HasPrefix(s[i:], "$("):
				r.push(shSubst)
				i += r.copyN(i, 2)
			case c == '(' && f.kind == shSubst:
				f.depth++
				i += r.copyN(i, 1)
			case c == ')' && f.kind == shSubst && f.depth == 0:
				r.pop() // the substitution ends; the word goes on
				i += r.copyN(i, 1)
				wordStart = false
				continue
			case c == ')' && f.kind == shSubst:
				f.depth--
				i += r.copyN(i, 1)
			default:
				i += r.copyN(i, 1)
			}
			wordStart = strings.IndexByte(" \t\n;&|()<>", c) >= 0
			continue
		case shDouble:
			switch {
			case c == '\\':
				if i+1 < len(s) && atToken(i+1) {
					r.out.WriteString(`\\`) // stays a literal backslash
					i++
					continue
				}
				if i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i += r.copyN(i, 2)
				} else {
					i += r.copyN(i, 1)
				}
			case c == '"':
				r.pop()
				i += r.copyN(i, 1)
			case c == '`':
				r.push(shBacktick)
				i += r.copyN(i, 1)
			case strings.HasPrefix(s[i:], "$(("):
				r.push(shArith)
				i += r.copyN(i, 3)
			case strings.HasPrefix(s[i:], "$("):
				r.push(shSubst)
				i += r.copyN(i, 2)
			default:
				i += r.copyN(i, 1)
			}
		case shSingle:
			if c == '\'' {
				r.pop()
			}
			i += r.copyN(i, 1)
		case shBacktick:
			switch {
			case c == '\\':
				if i+1 < len(s) && atToken(i+1) {
					i++
					continue
				}
				i += r.copyN(i, 2)
			case c == '`':
				r.pop()
				i += r.copyN(i, 1)
			case c == '\'':
				r.push(shSingle)
				i += r.copyN(i, 1)
			case c == '"':
				r.push(shDouble)
				i += r.copyN(i, 1)
			default:
				i += r.copyN(i, 1)
			}
		case shArith:
			switch {
			case strings.HasPrefix(s[i:], "$(("):
				r.push(shArith)
				i += r.copyN(i, 3)
			case strings.HasPrefix(s[i:], "$("):
				r.push(shSubst)
				i += r.copyN(i, 2)
			case c == '(':
				f.depth++
				i += r.copyN(i, 1)
			case c == ')' && f.depth == 0 && strings.HasPrefix(s[i:], "))"):
				r.pop()
				i += r.copyN(i, 2)
			case c == ')':
				if f.depth > 0 {
					f.depth--
				}
				i += r.copyN(i, 1)
			default:
				i += r.copyN(i, 1)
			}
		case shComment:
			if c == '\n' {
				r.pop()
				wordStart = true
				i += r.copyN(i, 1)
				continue
			}
			i += r.copyN(i, 1)
		}
		wordStart = false
	}
}

// copyN copies up to n source bytes from i and returns how many it copied;
// it never copies into a known token.
func (r *shellRenderer) copyN(i, n int) int {
	end := min(i+n, len(r.src))
	if r.k < len(r.known) && r.known[r.k].start > i && r.known[r.k].start < end {
		end = r.known[r.k].start
	}
	r.out.WriteString(r.src[i:end])
	return end - i
}

// reference writes the variable reference for a token in the current
// context.
func (r *shellRenderer) reference(sp span) {
	v := r.variable(sp)
	switch r.top().kind {
	case shDouble, shArith:
		r.out.WriteString("${" + v + "}")
	case shSingle:
		r.out.WriteString(`'"${` + v + `}"'`)
	default: // plain, $( ), backticks, a comment
		r.out.WriteString(`"${` + v + `}"`)
	}
}
