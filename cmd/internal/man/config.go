package man

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Config renders binky.toml(5) from docs/config.md: its headings become
// sections, each row of a key table an entry (the key, then its type,
// default and meaning), prose paragraphs and code blocks stay. It fails
// when the page has no key table, so a moved reference is noticed.
func Config(md []byte, version string) ([]byte, error) {
	var b strings.Builder
	header(&b, "binky.toml", "5", "binky "+version, "Binky Manual", "the configuration of a Binky project")
	keys := 0
	var cols []string
	inCode, inPara := false, false
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	first := true
	for sc.Scan() {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "```"):
			if inCode {
				b.WriteString(".fi\n.RE\n")
			} else {
				b.WriteString(".PP\n.RS 4\n.nf\n")
			}
			inCode, inPara = !inCode, false
		case inCode:
			b.WriteString(escapeCode(line) + "\n")
		case strings.HasPrefix(trim, "# "):
			if first {
				b.WriteString(".SH DESCRIPTION\n")
				first = false
			}
		case strings.HasPrefix(trim, "## "):
			fmt.Fprintf(&b, ".SH %s\n", strings.ToUpper(inlinePlain(trim[3:])))
			inPara, cols = false, nil
		case strings.HasPrefix(trim, "### "):
			fmt.Fprintf(&b, ".SS %s\n", inline(trim[4:]))
			inPara, cols = false, nil
		case strings.HasPrefix(trim, "<!--"):
		case strings.HasPrefix(trim, "|"):
			cells := splitRow(trim)
			switch {
			case cols == nil:
				cols = cells
			case isRule(cells):
			default:
				tableRow(&b, cols, cells)
				if len(cols) > 0 && strings.EqualFold(cols[0], "key") {
					keys++
				}
			}
			inPara = false
		case trim == "":
			inPara, cols = false, nil
		default:
			if !inPara {
				b.WriteString(".PP\n")
				inPara = true
			}
			if strings.HasPrefix(trim, "- ") {
				b.WriteString(".IP \\(bu 2\n")
				trim = trim[2:]
			}
			b.WriteString(inline(trim) + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if keys == 0 {
		return nil, fmt.Errorf("binky.toml(5): no key table (| key | … |) in the config reference")
	}
	b.WriteString(".SH SEE ALSO\n\\fBbinky\\fR(1)\n")
	return []byte(b.String()), nil
}

// tableRow writes one table row: the first cell as the tag, the others as
// "column: value" after it.
func tableRow(b *strings.Builder, cols, cells []string) {
	b.WriteString(".TP\n" + inline(cells[0]) + "\n")
	var rest []string
	for i := 1; i < len(cells); i++ {
		name := ""
		if i < len(cols) {
			name = cols[i]
		}
		if name == "meaning" || name == "" {
			rest = append(rest, inline(cells[i]))
			continue
		}
		rest = append(rest, inline(name+": "+cells[i])+".")
	}
	b.WriteString(strings.Join(rest, " ") + "\n")
}

func splitRow(s string) []string {
	s = strings.TrimPrefix(strings.TrimSuffix(s, "|"), "|")
	// A | inside a code span (`a|b`) is not a column break.
	var cells []string
	var cur strings.Builder
	code := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '`':
			code = !code
			cur.WriteByte(s[i])
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			cur.WriteByte('|')
			i++
		case s[i] == '|' && !code:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func isRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

// inlinePlain is inline without fonts (for .SH lines).
func inlinePlain(s string) string {
	s = strings.NewReplacer("`", "", "**", "").Replace(s)
	return escape(mdLink().ReplaceAllString(s, "$1"))
}

// escapeCode protects a line of a code block.
func escapeCode(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
