package config

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// BurntSushi/toml records where every key is written but does not export
// it, so positions come from this small scanner. It runs only on input the
// toml parser has already accepted, and it never fails: whatever it cannot
// follow it skips, and a lookup that misses falls back to the nearest
// enclosing key.

// pos is a 1-based line and column (columns count runes).
type pos struct{ line, col int }

// posIndex maps a key path (see pathKey) to where the key is written.
// Array elements are addressed by "#<index>" path parts.
type posIndex map[string]pos

// pathKey joins key parts into a posIndex key.
func pathKey(parts ...string) string { return strings.Join(parts, "\x1f") }

// elem is the path part of array element i.
func elem(i int) string { return "#" + strconv.Itoa(i) }

// lookup returns where path is written, or where its nearest recorded
// parent is, or line 1.
func (ix posIndex) lookup(path ...string) pos {
	for n := len(path); n > 0; n-- {
		if p, ok := ix[pathKey(path[:n]...)]; ok {
			return p
		}
	}
	return pos{line: 1}
}

type posScanner struct {
	src       string
	i         int
	line      int
	lineStart int
	idx       posIndex
	arrays    map[string]int // [[array table]] occurrences so far

	depth int // nesting of arrays and inline tables

	// Column cache: colRunes runes lie between lineStart and colAt, so
	// that many keys on one long line cost linear time.
	colAt, colRunes int
}

func indexPositions(src string) posIndex {
	s := &posScanner{src: src, line: 1, idx: posIndex{}, arrays: map[string]int{}}
	s.document()
	return s.idx
}

func (s *posScanner) eof() bool { return s.i >= len(s.src) }

func (s *posScanner) peek(off int) byte {
	if s.i+off < len(s.src) {
		return s.src[s.i+off]
	}
	return 0
}

func (s *posScanner) advance() {
	if s.eof() {
		return
	}
	if s.src[s.i] == '\n' {
		s.line++
		s.lineStart = s.i + 1
	}
	s.i++
}

func (s *posScanner) here() pos {
	if s.colAt < s.lineStart || s.colAt > s.i {
		s.colAt, s.colRunes = s.lineStart, 0
	}
	s.colRunes += utf8.RuneCountInString(s.src[s.colAt:s.i])
	s.colAt = s.i
	return pos{line: s.line, col: s.colRunes + 1}
}

// maxDepth bounds the nesting whose keys are recorded; deeper values are
// still skipped correctly, so pathological input stays linear.
const maxDepth = 16

func (s *posScanner) record(p pos, path []string) {
	if s.depth > maxDepth {
		return
	}
	k := pathKey(path...)
	if _, ok := s.idx[k]; !ok {
		s.idx[k] = p
	}
}

func (s *posScanner) skipSpace() {
	for !s.eof() && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

func (s *posScanner) skipComment() {
	if s.peek(0) != '#' {
		return
	}
	for !s.eof() && s.src[s.i] != '\n' {
		s.i++
	}
}

// skipBlank skips spaces, newlines and comments.
func (s *posScanner) skipBlank() {
	for !s.eof() {
		switch s.src[s.i] {
		case ' ', '\t', '\r', '\n':
			s.advance()
		case '#':
			s.skipComment()
		default:
			return
		}
	}
}

// skipLine skips to the start of the next line.
func (s *posScanner) skipLine() {
	for !s.eof() && s.src[s.i] != '\n' {
		s.advance()
	}
	s.advance()
}

func (s *posScanner) document() {
	var table []string
	for {
		s.skipBlank()
		if s.eof() {
			return
		}
		start := s.i
		if s.peek(0) == '[' {
			table = s.header()
		} else {
			s.keyval(table)
		}
		s.skipSpace()
		s.skipComment()
		if s.i == start || (!s.eof() && s.src[s.i] != '\n' && s.src[s.i] != '\r') {
			s.skipLine()
		}
	}
}

// header reads [a.b] or [[a.b]] and returns the new current table.
func (s *posScanner) header() []string {
	array := s.peek(1) == '['
	s.advance()
	if array {
		s.advance()
	}
	s.skipSpace()
	p := s.here()
	key := s.key()
	s.skipSpace()
	s.advance() // ]
	if array {
		s.advance()
	}
	for n := 1; n <= len(key); n++ {
		s.record(p, key[:n])
	}
	if !array {
		return key
	}
	k := pathKey(key...)
	n := s.arrays[k]
	s.arrays[k] = n + 1
	t := append(append([]string(nil), key...), elem(n))
	s.record(p, t)
	return t
}

// keyval reads key = value under prefix.
func (s *posScanner) keyval(prefix []string) {
	p := s.here()
	key := s.key()
	if len(key) == 0 {
		return
	}
	full := prefix
	if s.depth <= maxDepth {
		full = append(append([]string(nil), prefix...), key...)
		for n := len(prefix) + 1; n <= len(full); n++ {
			s.record(p, full[:n])
		}
	}
	s.skipSpace()
	if s.peek(0) != '=' {
		return
	}
	s.advance()
	s.skipSpace()
	s.value(full)
}

// key reads a dotted key; it returns nil when there is none here.
func (s *posScanner) key() []string {
	var parts []string
	for {
		s.skipSpace()
		part, ok := s.simpleKey()
		if !ok {
			return parts
		}
		parts = append(parts, part)
		s.skipSpace()
		if s.peek(0) != '.' {
			return parts
		}
		s.advance()
	}
}

func (s *posScanner) simpleKey() (string, bool) {
	switch s.peek(0) {
	case '"':
		raw := s.basicString()
		return unescapeKey(raw), true
	case '\'':
		return s.literalString(), true
	}
	start := s.i
	for !s.eof() && isBare(s.src[s.i]) {
		s.i++
	}
	if s.i == start {
		return "", false
	}
	return s.src[start:s.i], true
}

func isBare(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// basicString reads "…" and returns the raw (still escaped) contents.
func (s *posScanner) basicString() string {
	s.advance()
	start := s.i
	for !s.eof() {
		switch s.src[s.i] {
		case '\\':
			s.advance()
			s.advance()
		case '"':
			raw := s.src[start:s.i]
			s.advance()
			return raw
		case '\n':
			return s.src[start:s.i]
		default:
			s.advance()
		}
	}
	return s.src[start:]
}

func (s *posScanner) literalString() string {
	s.advance()
	start := s.i
	for !s.eof() && s.src[s.i] != '\'' && s.src[s.i] != '\n' {
		s.advance()
	}
	raw := s.src[start:s.i]
	if s.peek(0) == '\'' {
		s.advance()
	}
	return raw
}

// multiline skips a triple-quoted string (basic or literal) whose opening
// quotes are at i.
func (s *posScanner) multiline(q byte) {
	s.advance()
	s.advance()
	s.advance()
	for !s.eof() {
		c := s.src[s.i]
		if c == '\\' && q == '"' {
			s.advance()
			s.advance()
			continue
		}
		if c == q && s.peek(1) == q && s.peek(2) == q {
			s.advance()
			s.advance()
			s.advance()
			// Up to two more quotes belong to the content.
			for n := 0; n < 2 && s.peek(0) == q; n++ {
				s.advance()
			}
			return
		}
		s.advance()
	}
}

func (s *posScanner) value(path []string) {
	switch c := s.peek(0); {
	case c == '"' || c == '\'':
		if s.peek(1) == c && s.peek(2) == c {
			s.multiline(c)
		} else if c == '"' {
			s.basicString()
		} else {
			s.literalString()
		}
	case c == '[':
		s.array(path)
	case c == '{':
		s.inlineTable(path)
	default:
		s.scalar()
	}
}

func (s *posScanner) array(path []string) {
	s.advance()
	s.depth++
	defer func() { s.depth-- }()
	for n := 0; ; n++ {
		s.skipBlank()
		if s.eof() {
			return
		}
		if s.peek(0) == ']' {
			s.advance()
			return
		}
		start := s.i
		el := path
		if s.depth <= maxDepth {
			el = append(append([]string(nil), path...), elem(n))
			s.record(s.here(), el)
		}
		s.value(el)
		s.skipBlank()
		if s.peek(0) == ',' {
			s.advance()
		} else if s.i == start {
			s.advance() // unexpected byte: make progress
		}
	}
}

func (s *posScanner) inlineTable(path []string) {
	s.advance()
	s.depth++
	defer func() { s.depth-- }()
	for {
		s.skipBlank()
		if s.eof() {
			return
		}
		if s.peek(0) == '}' {
			s.advance()
			return
		}
		start := s.i
		s.keyval(path)
		s.skipBlank()
		if s.peek(0) == ',' {
			s.advance()
		} else if s.i == start {
			s.advance()
		}
	}
}

// scalar skips a number, boolean or datetime (which may hold one space).
func (s *posScanner) scalar() {
	start := s.i
	for !s.eof() && !strings.ContainsRune(" \t\r\n,]}#", rune(s.src[s.i])) {
		s.i++
	}
	word := s.src[start:s.i]
	if len(word) == 10 && word[4] == '-' && word[7] == '-' && s.peek(0) == ' ' && s.peek(1) >= '0' && s.peek(1) <= '9' {
		s.i++
		for !s.eof() && !strings.ContainsRune(" \t\r\n,]}#", rune(s.src[s.i])) {
			s.i++
		}
	}
}

// unescapeKey decodes the escapes TOML allows in a quoted key.
func unescapeKey(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[raw[i]]
			if i+n < len(raw) {
				if v, err := strconv.ParseUint(raw[i+1:i+1+n], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += n
					continue
				}
			}
			b.WriteByte(raw[i])
		default:
			b.WriteByte(raw[i])
		}
	}
	return b.String()
}
