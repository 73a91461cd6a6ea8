package compose

import "strings"

// Part is one piece of a compose environment value as init keeps it:
// literal text, or a variable compose interpolates from the shell or .env.
type Part struct {
	// Lit is literal text (compose's $$ already read as $), when Var is "".
	Lit string
	// Var is the variable of ${Var}, ${Var:-default}, ${Var?err}… or $Var.
	Var string
	// Op is the operator after the name: "", ":-", "-", ":?", "?", ":+"
	// or "+".
	Op string
	// Default is the text after :- or -, kept only when init may write it
	// (HasDefault): no secret, no further interpolation.
	Default    string
	HasDefault bool
}

// parseValue splits a compose value into literal text and interpolated
// variables, as compose reads it: $$ is a literal $, ${NAME[op arg]} and
// $NAME are variables. ok is false when the value has a ${ that compose
// would refuse (no closing brace, no name). A default keeps its raw text
// in Default (the caller decides whether it may be kept).
func parseValue(v string) (parts []Part, ok bool) {
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, Part{Lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(v); {
		c := v[i]
		if c != '$' || i+1 == len(v) {
			lit.WriteByte(c)
			i++
			continue
		}
		switch n := v[i+1]; {
		case n == '$':
			lit.WriteByte('$')
			i += 2
		case n == '{':
			end := closingBrace(v, i+2)
			if end < 0 {
				return nil, false
			}
			body := v[i+2 : end]
			j := 0
			for j < len(body) && nameByte(body[j], j == 0) {
				j++
			}
			if j == 0 {
				return nil, false
			}
			p := Part{Var: body[:j]}
			rest := body[j:]
			switch {
			case rest == "":
			case strings.HasPrefix(rest, ":-"), strings.HasPrefix(rest, ":?"), strings.HasPrefix(rest, ":+"):
				p.Op, p.Default = rest[:2], rest[2:]
			case rest[0] == '-' || rest[0] == '?' || rest[0] == '+':
				p.Op, p.Default = rest[:1], rest[1:]
			default:
				return nil, false
			}
			p.HasDefault = p.Op == ":-" || p.Op == "-"
			if !p.HasDefault {
				p.Default = ""
			}
			flush()
			parts = append(parts, p)
			i = end + 1
		case nameByte(n, true):
			j := i + 1
			for j < len(v) && nameByte(v[j], false) {
				j++
			}
			flush()
			parts = append(parts, Part{Var: v[i+1 : j]})
			i = j
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return parts, true
}

// closingBrace returns the index of the } that closes a ${ whose body
// starts at from, counting nested ${…}, or -1.
func closingBrace(v string, from int) int {
	depth := 0
	for i := from; i < len(v); i++ {
		switch {
		case v[i] == '$' && i+1 < len(v) && v[i+1] == '{':
			depth++
			i++
		case v[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

func nameByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// keepParts decides what of the value of the variable name init may keep
// (see EnvVar.Parts): nil when binky.toml must read ${env.name} instead.
func keepParts(name, value string) []Part {
	parts, ok := parseValue(value)
	if !ok {
		return nil
	}
	for i := range parts {
		p := &parts[i]
		if p.Var == "" {
			if strings.Contains(p.Lit, "${") {
				// A literal ${ (compose's $${) would read as a token.
				return nil
			}
			continue
		}
		if p.Op == ":+" || p.Op == "+" {
			// "this text when set": binky has no such form.
			return nil
		}
		if p.HasDefault && (SecretName(name) || SecretName(p.Var) || strings.Contains(p.Default, "$") || strings.Contains(p.Default, "${") || secretValue(p.Default)) {
			p.Default, p.HasDefault = "", false
		}
	}
	if len(parts) == 1 && parts[0].Var != "" {
		// Exactly one variable: binky reads the same one, whatever the
		// name says (S3_SECRET: ${MINIO_PASSWORD} → ${env.MINIO_PASSWORD}).
		return parts
	}
	if SecretName(name) {
		// A secret's literal text is never written, with one exception:
		// a switch (AUTH_ENABLED=true) under a name only init's wider
		// rule calls secret.
		if len(parts) == 0 {
			return []Part{}
		}
		if len(parts) == 1 && flagValue(parts[0].Lit) && !configSecretName(name) {
			return parts
		}
		return nil
	}
	// Variables stand as a placeholder that no check reads as a secret,
	// so postgres://app:${PW}@host is not a literal credential.
	var shape strings.Builder
	for _, p := range parts {
		if p.Var != "" {
			shape.WriteString("\x00")
			continue
		}
		shape.WriteString(p.Lit)
	}
	if secretValue(strings.ReplaceAll(shape.String(), ":\x00@", "@")) {
		return nil
	}
	if parts == nil {
		parts = []Part{}
	}
	return parts
}
