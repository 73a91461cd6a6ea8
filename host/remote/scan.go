package remote

import "strings"

// tooDeep returns the line where brackets and braces outside strings and
// comments first nest deeper than maxDepth, or 0. It is linear and
// allocates nothing; the decoder reports any TOML error it steps over.
func tooDeep(src string) int {
	depth, line := 0, 1
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case '"', '\'':
			multi := strings.HasPrefix(src[i:], strings.Repeat(string(c), 3))
			if multi {
				i += 3
				for i < len(src) && !strings.HasPrefix(src[i:], strings.Repeat(string(c), 3)) {
					if src[i] == '\n' {
						line++
					}
					if c == '"' && src[i] == '\\' {
						i++
					}
					i++
				}
				i += 2
				continue
			}
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if c == '"' && src[i] == '\\' {
					i++
				}
			}
			if i < len(src) && src[i] == '\n' {
				i--
			}
		case '[', '{':
			depth++
			if depth > maxDepth {
				return line
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return 0
}

// lineIndex maps "table\x1fkey" (and "table\x1f" for a table's header) to
// the line it is written on, for error positions. It reads what a
// hand-written hosts.toml holds ([a.b] headers, k = v and a.b = v lines);
// an unusual layout just loses the line number.
type lineIndex map[string]int

func indexLines(src string) lineIndex {
	ix := lineIndex{}
	table := ""
	for n, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l[0] == '#':
		case strings.HasPrefix(l, "["):
			end := strings.IndexByte(l, ']')
			if end < 0 {
				continue
			}
			table = normKey(strings.Trim(l[:end], "[]"))
			ix.add(table, "", n+1)
			for p := table; p != ""; {
				parent, key := "", p
				if i := strings.LastIndexByte(p, '.'); i >= 0 {
					parent, key = p[:i], p[i+1:]
				}
				ix.add(parent, key, n+1)
				p = parent
			}
		default:
			eq := strings.IndexByte(l, '=')
			if eq < 0 {
				continue
			}
			full := normKey(l[:eq])
			if table != "" {
				full = table + "." + full
			}
			parent, key := "", full
			if i := strings.LastIndexByte(full, '.'); i >= 0 {
				parent, key = full[:i], full[i+1:]
			}
			ix.add(parent, key, n+1)
			// Each enclosing table written as a dotted key starts here too.
			for p := parent; p != table && p != ""; {
				ix.add(p, "", n+1)
				i := strings.LastIndexByte(p, '.')
				if i < 0 {
					break
				}
				p = p[:i]
			}
		}
	}
	return ix
}

func (ix lineIndex) add(table, key string, line int) {
	k := table + "\x1f" + key
	if _, ok := ix[k]; !ok {
		ix[k] = line
	}
}

// find is the line of key in table (of table's header when key is ""),
// else of the table, else 0.
func (ix lineIndex) find(table, key string) int {
	if l, ok := ix[table+"\x1f"+key]; ok {
		return l
	}
	return ix[table+"\x1f"]
}

// normKey drops spaces and quotes around dotted key parts.
func normKey(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if len(p) >= 2 && (p[0] == '"' || p[0] == '\'') && p[len(p)-1] == p[0] {
			p = p[1 : len(p)-1]
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}
