package config

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// The toml decoder's time and memory grow with how deeply keys nest and how
// many there are: a 16 KB `env = {a={a={…}}}` 4,000 deep took 747 MB, and
// 1 MiB of short keys nested 16 deep over 300 MB; the position index
// (positions.go) costs about 1 KB per array element. So before decoding, a
// small scanner that knows TOML's strings, comments, keys and brackets (and
// nothing else) refuses a file that nests too deeply or holds too many keys
// and array elements.
// It runs in linear time and allocates nothing; what it cannot follow it
// steps over byte by byte, and the decoder then reports the TOML error.

// MaxDepth bounds nesting: the parts of the current [table] header (plus one
// for an [[array of tables]]), the parts of each dotted key, each inline
// table's keys and each array all add a level. A binky.toml needs about five
// (services.api.health.http, services.db.config.x).
const MaxDepth = 16

// MaxEntries bounds how many key parts (a.b = 1 writes two) and array
// elements a binky.toml may write, which bounds decoding and validating it
// to a few tens of MB.
const MaxEntries = 10000

var (
	errTooDeep = errors.New("nesting too deep")
	errTooMany = errors.New("too many keys and array elements")
)

// limitScanner walks a document checking MaxDepth and MaxEntries.
type limitScanner struct {
	file      string
	src       string
	i         int
	line      int
	lineStart int
	entries   int // key parts and array elements so far
}

// checkLimits returns a *LoadError naming the line where src (the whole
// file, BOM stripped) first nests deeper than MaxDepth or writes its
// MaxEntries+1st key part or array element, or nil.
func checkLimits(file, src string) *LoadError {
	s := &limitScanner{file: file, src: src, line: 1}
	return s.document()
}

func (s *limitScanner) eof() bool { return s.i >= len(s.src) }

func (s *limitScanner) peek(off int) byte {
	if s.i+off < len(s.src) {
		return s.src[s.i+off]
	}
	return 0
}

// next steps over one byte, counting lines.
func (s *limitScanner) next() {
	if s.eof() {
		return
	}
	if s.src[s.i] == '\n' {
		s.line++
		s.lineStart = s.i + 1
	}
	s.i++
}

func (s *limitScanner) spaces() {
	for !s.eof() && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// blank steps over spaces, line ends and comments.
func (s *limitScanner) blank() {
	for !s.eof() {
		switch s.src[s.i] {
		case ' ', '\t', '\r', '\n':
			s.next()
		case '#':
			for !s.eof() && s.src[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

func (s *limitScanner) tooDeep() *LoadError {
	return &LoadError{
		File: s.file, Line: s.line, Col: utf8.RuneCountInString(s.src[s.lineStart:s.i]) + 1,
		Msg:  fmt.Sprintf("nested deeper than %d levels", MaxDepth),
		Hint: "table headers, dotted keys, inline tables and arrays each add a level; flatten this value",
		Err:  errTooDeep,
	}
}

func (s *limitScanner) tooMany() *LoadError {
	return &LoadError{
		File: s.file, Line: s.line, Col: utf8.RuneCountInString(s.src[s.lineStart:s.i]) + 1,
		Msg:  fmt.Sprintf("more than %d keys and array elements; a binky.toml is a short hand-written file", MaxEntries),
		Hint: "keep bulk data in a file the service reads",
		Err:  errTooMany,
	}
}

// document reads statements: [table] and [[array]] headers and key = value.
func (s *limitScanner) document() *LoadError {
	table := 0 // levels of the current table
	for {
		s.blank()
		if s.eof() {
			return nil
		}
		start := s.i
		if s.peek(0) == '[' {
			array := s.peek(1) == '['
			s.i++
			extra := 0
			if array {
				s.i++
				extra = 1
			}
			n, err := s.key(extra)
			if err != nil {
				return err
			}
			table = n + extra
			if table > MaxDepth {
				return s.tooDeep()
			}
			s.spaces()
			if s.peek(0) == ']' {
				s.i++
				if array && s.peek(0) == ']' {
					s.i++
				}
			}
			continue
		}
		n, err := s.key(table)
		if err != nil {
			return err
		}
		s.spaces()
		if s.peek(0) == '=' {
			s.i++
			if err := s.value(table + n); err != nil {
				return err
			}
		}
		if s.i == start {
			s.next() // not TOML: the decoder will say so
		}
	}
}

// key reads a possibly dotted key whose table sits depth levels deep and
// returns how many parts it has.
func (s *limitScanner) key(depth int) (int, *LoadError) {
	n := 0
	for {
		s.spaces()
		start := s.i
		switch s.peek(0) {
		case '"', '\'':
			s.str()
		default:
			for !s.eof() && !keyStop(s.src[s.i]) {
				s.i++
			}
		}
		if s.i == start {
			return n, nil
		}
		n++
		if s.entries++; s.entries > MaxEntries {
			return n, s.tooMany()
		}
		if depth+n > MaxDepth {
			return n, s.tooDeep()
		}
		s.spaces()
		if s.peek(0) != '.' {
			return n, nil
		}
		s.i++
	}
}

// keyStop reports whether c ends a bare key. Anything else is taken as part
// of one, which is more than TOML allows and so never splits a key short.
func keyStop(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '.', '=', '[', ']', '{', '}', ',', '"', '\'', '#':
		return true
	}
	return false
}

// value reads one value at depth levels: a string, an array, an inline
// table, or a scalar (number, boolean, datetime).
func (s *limitScanner) value(depth int) *LoadError {
	s.spaces()
	switch s.peek(0) {
	case '"', '\'':
		s.str()
	case '[':
		s.i++
		if depth+1 > MaxDepth {
			return s.tooDeep()
		}
		for {
			s.blank()
			switch s.peek(0) {
			case 0:
				if s.eof() {
					return nil
				}
			case ']':
				s.i++
				return nil
			case ',':
				s.i++
				continue
			}
			if s.entries++; s.entries > MaxEntries {
				return s.tooMany()
			}
			start := s.i
			if err := s.value(depth + 1); err != nil {
				return err
			}
			if s.i == start {
				s.next()
			}
		}
	case '{':
		s.i++
		for {
			s.blank()
			switch s.peek(0) {
			case 0:
				if s.eof() {
					return nil
				}
			case '}':
				s.i++
				return nil
			case ',':
				s.i++
				continue
			}
			start := s.i
			n, err := s.key(depth)
			if err != nil {
				return err
			}
			s.spaces()
			if s.peek(0) == '=' {
				s.i++
				if err := s.value(depth + n); err != nil {
					return err
				}
			}
			if s.i == start {
				s.next()
			}
		}
	default:
		for !s.eof() && !scalarStop(s.src[s.i]) {
			s.i++
		}
	}
	return nil
}

// scalarStop reports whether c cannot be part of a number, boolean or
// datetime (which may hold a space: 1979-05-27 07:32:00).
func scalarStop(c byte) bool {
	switch c {
	case '\r', '\n', ',', '[', ']', '{', '}', '"', '\'', '#':
		return true
	}
	return false
}

// str steps over a basic or literal string, single- or multi-line, at its
// opening quote. An unterminated single-line string ends at the line's end.
func (s *limitScanner) str() {
	q := s.src[s.i]
	if s.peek(1) == q && s.peek(2) == q {
		s.i += 3
		for !s.eof() {
			c := s.src[s.i]
			switch {
			case c == '\\' && q == '"':
				s.i++
				s.next()
			case c == q && s.peek(1) == q && s.peek(2) == q:
				s.i += 3
				// Up to two more quotes belong to the content: """a""""".
				for k := 0; k < 2 && s.peek(0) == q; k++ {
					s.i++
				}
				return
			default:
				s.next()
			}
		}
		return
	}
	s.i++
	for !s.eof() {
		c := s.src[s.i]
		switch {
		case c == '\n':
			return
		case c == q:
			s.i++
			return
		case c == '\\' && q == '"' && s.peek(1) != '\n':
			s.i = min(s.i+2, len(s.src)) // a trailing backslash ends the file
		default:
			s.i++
		}
	}
}
