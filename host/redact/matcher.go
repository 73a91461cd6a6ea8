package redact

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// matcher finds the registered forms in a text in one pass, whatever their
// number: a bitset over the first two bytes of every form says at which
// positions a form may start, and only there are the forms that start with
// those two bytes compared.
//
// The text is read leniently, so that one form stands for many spellings:
//   - a line break ("\n" or "\r\n") may sit between any two bytes of a form
//     (at most one in each gap), so a secret a program wrapped over lines
//     (base64 at 76 columns, a hex dump) is still found;
//   - a percent-escape %XX (hex digits in either case) may stand for the
//     byte XX, and '+' for a space: a form is found URL-encoded whichever
//     bytes the encoder left alone (JavaScript's encodeURIComponent,
//     Python's quote and quote_plus, Go's QueryEscape and PathEscape…);
//   - a JSON string escape (\" \\ \/ \b \f \n \r \t, \uXXXX and a
//     surrogate pair, hex digits in either case) may stand for the bytes
//     it encodes: a form is found inside a JSON string whichever encoder
//     wrote it (Go's, with or without HTML escaping, JavaScript's,
//     Python's with or without ensure_ascii, PHP's \/).
//
// One occurrence is read one way: once a %XX or '+' stood for a byte, a '%'
// of the form must be written %25; once a '%' of the form stood for itself,
// no %XX is read. Likewise for '\' and JSON escapes. Where a text allows
// both readings (the form's '%' meets "%25…") both are tried, at most once
// for each kind, so a comparison costs at most four walks of the form.
//
// Forms with edge set (the lines of multi-line secrets) are also matched in
// part where the text is a window of a longer one (scan.start, scan.end):
// at its start a suffix of such a form, after what may be the cut end of
// an escape sequence or a line break (escapeTail), and at its end
// a prefix, when the part holds MinLen form bytes or more.
type matcher struct {
	forms []form
	// pairs has bit a<<8|b set when a form may begin at a text position
	// holding a then b: a form starting with a then b, or a then a line
	// break or escape that may continue it, or an escape sequence (%X, \x,
	// or + for a space) that may encode the form's first byte.
	pairs [1 << 16 / 64]uint64
	// byPair lists, per first two bytes, the forms to compare (indices
	// into forms, longest first); byFirst the same per first byte.
	byPair  map[uint16][]int32
	listed  [1 << 16 / 64]uint64 // the keys of byPair
	byFirst [256][]int32
	// triples has bit triple(a, b, c) set for the first three bytes of
	// every form: where the two bytes after a position are plain (no line
	// break, no escape), a form can only begin there if they are its
	// second and third. It spares most map lookups when many forms make
	// most pairs of letters and digits a hit.
	triples [1 << 16 / 64]uint64
	// edges lists every suffix of MinLen bytes or more (but the whole) of
	// every edge form, by its first two bytes, sorted; edgeAt has the
	// range of edges of every key in it.
	edges    []edgeRef
	edgeAt   map[uint16][2]int32
	edgeBits []uint64 // the keys of edgeAt
	// edgeTriples is triples for the edge suffixes.
	edgeTriples []uint64
}

// edgeRef is the suffix form[off:] of forms[form], keyed by its first two
// bytes.
type edgeRef struct {
	key       uint16
	form, off int32
}

// maxSkip is how many bytes at a window's start may be passed over before
// a suffix of an edge form (see escapeTail): the cut end of an escape
// sequence (at most 11, "uD83D\uDE00" of a surrogate pair) and a line
// break.
const maxSkip = 13

func newMatcher(forms []form) *matcher {
	m := &matcher{forms: forms, byPair: map[uint16][]int32{}}
	set := func(k uint16) { m.pairs[k/64] |= 1 << (k % 64) }
	add := func(k uint16, i int32) {
		set(k)
		m.listed[k/64] |= 1 << (k % 64)
		if l := m.byPair[k]; len(l) == 0 || l[len(l)-1] != i {
			m.byPair[k] = append(l, i)
		}
	}
	for i, f := range forms {
		s, fi := f.s, int32(i)
		forms[i].lit = strings.IndexAny(s, "%\\")
		if forms[i].lit < 0 {
			forms[i].lit = len(s)
		}
		a := uint16(s[0]) << 8
		add(a|uint16(s[1]), fi)
		t := triple(s[0], s[1], s[2])
		m.triples[t/64] |= 1 << (t % 64)
		// A line break or an escape sequence may come second; cover then
		// looks up the pair of s[0] and the byte after the break or the
		// byte the escape stands for.
		for _, c := range [...]byte{'\n', '\r', '%', '\\'} {
			set(a | uint16(c))
		}
		if s[1] == ' ' {
			set(a | '+')
		}
		m.byFirst[s[0]] = append(m.byFirst[s[0]], fi)
		// Escape sequences that may encode s[0].
		hi := s[0] >> 4
		set('%'<<8 | uint16(hexUpper[hi]))
		set('%'<<8 | uint16(hexLower[hi]))
		set('\\'<<8 | 'u')
		if e := shortEscape[s[0]]; e != 0 {
			set('\\'<<8 | uint16(e))
		}
		if s[0] == ' ' {
			for y := range 256 {
				set('+'<<8 | uint16(y))
			}
		}
		if f.edge {
			for o := 1; o+MinLen <= len(s); o++ {
				m.edges = append(m.edges, edgeRef{key: uint16(s[o])<<8 | uint16(s[o+1]), form: fi, off: int32(o)})
			}
		}
	}
	if len(m.edges) > 0 {
		slices.SortFunc(m.edges, func(a, b edgeRef) int {
			return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.form, b.form), cmp.Compare(a.off, b.off))
		})
		m.edgeAt = map[uint16][2]int32{}
		m.edgeBits = make([]uint64, 1<<16/64)
		m.edgeTriples = make([]uint64, 1<<16/64)
		for i, e := range m.edges {
			m.edgeBits[e.key/64] |= 1 << (e.key % 64)
			f := m.forms[e.form].s[e.off:]
			t := triple(f[0], f[1], f[2])
			m.edgeTriples[t/64] |= 1 << (t % 64)
			r, ok := m.edgeAt[e.key]
			if !ok {
				r[0] = int32(i)
			}
			r[1] = int32(i + 1)
			m.edgeAt[e.key] = r
		}
	}
	return m
}

// triple hashes three bytes to a bit of matcher.triples.
func triple(a, b, c byte) uint16 {
	return uint16((uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9E3779B1 >> 16)
}

// plain[c] says c is no line break and cannot begin an escape sequence.
var plain = func() (t [256]bool) {
	for c := range t {
		t[c] = true
	}
	for _, c := range []byte{'\n', '\r', '%', '\\', '+'} {
		t[c] = false
	}
	return t
}()

const (
	hexUpper = "0123456789ABCDEF"
	hexLower = "0123456789abcdef"
)

// shortEscape is the letter of a byte's two-character JSON escape.
var shortEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// unescapeShort is shortEscape reversed (0: no such escape).
var unescapeShort = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unhex is the value of a hex digit, or -1.
func unhex(c byte) int { return int(unhexTab[c]) }

var unhexTab = func() (t [256]int8) {
	for c := range t {
		t[c] = -1
	}
	for i, c := range []byte(hexLower) {
		t[c] = int8(i)
	}
	for i, c := range []byte(hexUpper) {
		t[c] = int8(i)
	}
	return t
}()

// Decoding state of one occurrence.
const (
	urlUsed  uint8 = 1 << iota // a %XX or '+' stood for a byte
	urlOff                     // a '%' of the form stood for itself
	jsonUsed                   // a JSON escape stood for bytes
	jsonOff                    // a '\' of the form stood for itself
)

// result is the outcome of comparing a form with a text.
type result struct {
	end     int  // text position after the occurrence, or -1
	partial bool // the text ended while the form could still match
	n       int  // form bytes matched before the text ended (partial)
	last    int  // text position after the last form byte matched (partial)
}

// compare matches f.s[k:] against p from i.
func compare(p []byte, i int, f *form, k int) result {
	return walk(p, i, f.s, f.lit, k, k, 0)
}

// walk matches f[k:] against p from j, in decoding state st; k0 is where
// the match began in f.
func walk(p []byte, j int, f string, lit, k0, k int, st uint8) result {
	// gap is how many bytes of a line break were passed over since the
	// last form byte matched (0: none, and one may come next).
	gap := 0
	for k < len(f) {
		if j == len(p) {
			return result{end: -1, partial: true, n: k - k0, last: j - gap}
		}
		c, b := p[j], f[k]
		if c == b && !special[b] {
			// As it is. Before the form's first '%' or '\', a byte can
			// only stand for itself: where the next agrees too, compare
			// eight at once.
			n := 1
			if k+8 <= lit && j+8 <= len(p) && p[j+1] == f[k+1] {
				n = 8
				if x := le64(p[j:]) ^ le64s(f[k:]); x != 0 {
					n = bits.TrailingZeros64(x) / 8
				}
			}
			j, k, gap = j+n, k+n, 0
			continue
		}
		if plain[c] {
			return result{end: -1} // neither the byte nor an escape or a line break
		}
		if c == '\n' || c == '\r' {
			// A line break between two bytes of the form: at most one.
			switch {
			case k == k0 || gap != 0:
				return result{end: -1}
			case c == '\n':
				j, gap = j+1, 1
			case j+1 == len(p):
				return result{end: -1, partial: true, n: k - k0, last: j}
			case p[j+1] == '\n':
				j, gap = j+2, 2
			default:
				return result{end: -1}
			}
			continue
		}
		// An escape sequence in p that may stand for f[k:k+fn]: pn bytes
		// of p, or part when p ends inside one.
		pn, fn, used, part := 0, 1, uint8(0), false
		switch {
		case c == '%' && st&urlOff == 0:
			if j+2 < len(p) { // the common case, inline
				if h, l := unhexTab[p[j+1]], unhexTab[p[j+2]]; h >= 0 && l >= 0 && byte(h)<<4|byte(l) == b {
					pn = 3
				}
			} else {
				pn, part = urlUnit(p, j, b)
			}
			used = urlUsed
		case c == '+' && b == ' ' && st&urlOff == 0:
			pn, used = 1, urlUsed
		case c == '\\' && st&jsonOff == 0:
			if j+1 < len(p) && p[j+1] != 'u' { // a short escape, inline
				if d := unescapeShort[p[j+1]]; d != 0 && d == b {
					pn = 2
				}
			} else {
				pn, fn, part = jsonUnit(p, j, f[k:])
			}
			used = jsonUsed
		}
		if c == b { // a '%' or '\' of the form, in p as itself
			off, must := urlOff, urlUsed
			if b == '\\' {
				off, must = jsonOff, jsonUsed
			}
			if st&must == 0 {
				if pn == 0 && !part {
					st |= off
					j, k, gap = j+1, k+1, 0
					continue
				}
				// Both readings may hold: try each.
				asIs := walk(p, j+1, f, lit, k0, k+1, st|off)
				if part {
					return better(asIs, result{end: -1, partial: true, n: k - k0, last: j - gap})
				}
				return better(asIs, walk(p, j+pn, f, lit, k0, k+fn, st|used))
			}
		}
		if pn > 0 {
			st |= used
			j, k, gap = j+pn, k+fn, 0
			continue
		}
		if part {
			return result{end: -1, partial: true, n: k - k0, last: j - gap}
		}
		return result{end: -1}
	}
	return result{end: j}
}

// le64 and le64s read eight bytes, little-endian.
func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func le64s(b string) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// special[b] says a form byte b may stand for itself or be escaped in the
// same text ('%', '\\'), so walk cannot take it as it is at once.
var special = [256]bool{'%': true, '\\': true}

// better merges the results of two readings of one occurrence.
func better(a, b result) result {
	switch {
	case a.end >= 0 && a.end >= b.end:
		return a
	case b.end >= 0:
		return b
	case a.partial && (!b.partial || a.n >= b.n):
		return a
	}
	return b
}

// urlUnit reads the percent-escape at p[j] ('%') as byte b: its length, or
// 0; part when p ends inside an escape that may still stand for b.
func urlUnit(p []byte, j int, b byte) (n int, part bool) {
	if j+1 == len(p) {
		return 0, true
	}
	if h := unhex(p[j+1]); h < 0 || byte(h) != b>>4 {
		return 0, false
	}
	if j+2 == len(p) {
		return 0, true
	}
	if l := unhex(p[j+2]); l < 0 || byte(l) != b&15 {
		return 0, false
	}
	return 3, false
}

// jsonUnit reads the JSON escape at p[j] ('\') as a prefix of f: its
// length in p and in f, or pn 0; part when p ends inside the escape.
func jsonUnit(p []byte, j int, f string) (pn, fn int, part bool) {
	r, pn, part := jsonRune(p, j)
	if pn == 0 {
		return 0, 0, part
	}
	if r < utf8.RuneSelf {
		if byte(r) != f[0] {
			return 0, 0, false
		}
		return pn, 1, false
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	if len(f) < n || string(buf[:n]) != f[:n] {
		return 0, 0, false
	}
	return pn, n, false
}

// jsonRune decodes the JSON escape at p[j] ('\'): the rune and the escape's
// length, or length 0 (with part when p ends inside it).
func jsonRune(p []byte, j int) (r rune, n int, part bool) {
	if j+1 == len(p) {
		return 0, 0, true
	}
	if e := p[j+1]; e != 'u' {
		if d := unescapeShort[e]; d != 0 {
			return rune(d), 2, false
		}
		return 0, 0, false
	}
	r, ok, part := hex4(p, j+2)
	if !ok {
		return 0, 0, part
	}
	switch {
	case 0xDC00 <= r && r < 0xE000:
		return 0, 0, false
	case r < 0xD800 || r >= 0xE000:
		return r, 6, false
	}
	// A high surrogate: the low one must follow.
	for i, c := range []byte{'\\', 'u'} {
		if j+6+i == len(p) {
			return 0, 0, true
		}
		if p[j+6+i] != c {
			return 0, 0, false
		}
	}
	lo, ok, part := hex4(p, j+8)
	if !ok {
		return 0, 0, part
	}
	if lo < 0xDC00 || lo >= 0xE000 {
		return 0, 0, false
	}
	return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, false
}

// hex4 reads four hex digits at p[i:].
func hex4(p []byte, i int) (r rune, ok, part bool) {
	for k := range 4 {
		if i+k == len(p) {
			return 0, false, true
		}
		h := unhex(p[i+k])
		if h < 0 {
			return 0, false, false
		}
		r = r<<4 | rune(h)
	}
	return r, true, false
}

// unitAt decodes the escape sequence at p[i] ('%', '\' or '+'): the
// bytes it stands for (up to two of them: b, and b2 when nb is 2 or more)
// and its length n; ok false when it stands for none, with part when p
// ends inside it.
func unitAt(p []byte, i int) (b, b2 byte, nb, n int, ok, part bool) {
	switch p[i] {
	case '+':
		return ' ', 0, 1, 1, true, false
	case '%':
		if i+2 >= len(p) {
			return 0, 0, 0, 0, false, i+1 == len(p) || unhex(p[i+1]) >= 0
		}
		h, l := unhex(p[i+1]), unhex(p[i+2])
		if h < 0 || l < 0 {
			return 0, 0, 0, 0, false, false
		}
		return byte(h<<4 | l), 0, 1, 3, true, false
	case '\\':
		r, n, part := jsonRune(p, i)
		if n == 0 {
			return 0, 0, 0, 0, false, part
		}
		if r < utf8.RuneSelf {
			return byte(r), 0, 1, n, true, false
		}
		var buf [utf8.UTFMax]byte
		nb := utf8.EncodeRune(buf[:], r)
		return buf[0], buf[1], nb, n, true, false
	}
	return 0, 0, 0, 0, false, false
}

// isEscapeStart reports whether c may begin an escape sequence.
func isEscapeStart(c byte) bool { return c == '%' || c == '\\' || c == '+' }

// escapeTail reports whether t, the bytes before a window's first whole
// character, may be the cut end of one escape sequence (of %XX, of a JSON
// \x or \uXXXX, of a surrogate pair \uXXXX\uXXXX), of a line break, or
// of an escape sequence and then a line break.
func escapeTail(t []byte) bool {
	if len(t) <= 4 && allHex(t) {
		return true // of %XX or \uXXXX
	}
	switch {
	case len(t) > 0 && t[len(t)-1] == '\n':
		t = t[:len(t)-1]
		if len(t) > 0 && t[len(t)-1] == '\r' {
			t = t[:len(t)-1]
		}
	case len(t) > 0 && t[len(t)-1] == '\r':
		t = t[:len(t)-1]
	}
	if len(t) == 1 && unescapeShort[t[0]] != 0 {
		return true // "n" of \n
	}
	if i := lastEscapeU(t); i >= 0 {
		// The low half of a surrogate pair follows what is left of the
		// high half.
		if len(t)-i != 6 || !allHex(t[i+2:]) {
			return false
		}
		t = t[:i]
	}
	if len(t) > 0 && t[0] == 'u' {
		return len(t) == 5 && allHex(t[1:])
	}
	return len(t) <= 4 && allHex(t)
}

// lastEscapeU is the index of the last \u in t, or -1.
func lastEscapeU(t []byte) int {
	for i := len(t) - 2; i >= 0; i-- {
		if t[i] == '\\' && t[i+1] == 'u' {
			return i
		}
	}
	return -1
}

// tailByte reports whether c may be part of what escapeTail accepts.
func tailByte(c byte) bool {
	return unhex(c) >= 0 || c == 'u' || c == '\\' || c == '\n' || c == '\r' || unescapeShort[c] != 0
}

func allHex(t []byte) bool {
	for _, c := range t {
		if unhex(c) < 0 {
			return false
		}
	}
	return true
}

// scan says how a text relates to the stream or text it is part of.
type scan struct {
	// start: the text begins a window (a string, a stream's first bytes),
	// so it may begin inside a secret; end: it ends one.
	start, end bool
	// partials asks for the first position where the end of the text
	// leaves an occurrence unfinished.
	partials bool
}

// cover marks every byte of p that lies inside an occurrence of a form,
// overlapping occurrences included, and, at a window's start or end (sc),
// the part of an edge form there; it returns nil when nothing matched.
// With sc.partials it also returns the first position where p's end leaves
// an occurrence unfinished (more bytes could complete it), else len(p).
// startEnd is the end of the furthest mark made at the window's start (0
// when none).
func (m *matcher) cover(p []byte, sc scan) (covered []bool, partialAt, startEnd int) {
	n := len(p)
	partialAt = n
	if n == 0 {
		return nil, partialAt, 0
	}
	marked := 0 // every byte in [i, marked) is covered, for the current i
	mark := func(lo, hi int) {
		if covered == nil {
			covered = make([]bool, n)
		}
		// Occurrences are found left to right: only the part past what
		// earlier ones marked is new (a secret that repeats one byte
		// overlaps itself at every position).
		for k := max(lo, marked); k < hi; k++ {
			covered[k] = true
		}
		marked = max(marked, hi)
	}
	check := func(i int, cands []int32) {
		for _, fi := range cands {
			f := &m.forms[fi]
			r := compare(p, i, f, 0)
			if r.partial && sc.partials && i < partialAt {
				partialAt = i
			}
			switch {
			case r.end >= 0:
				mark(i, r.end)
			case r.partial && sc.end && f.edge && r.n >= MinLen:
				mark(i, r.last)
			}
		}
	}
	if sc.start && len(m.edges) > 0 {
		var part bool
		startEnd, part = m.startEdges(p, sc, &covered)
		if part && sc.partials {
			partialAt = 0
		}
	}
	// unfinished notes that p ends where a form that begins with b0 at i
	// may go on.
	unfinished := func(i int, b0 byte) {
		if sc.partials && i < partialAt && len(m.byFirst[b0]) > 0 {
			partialAt = i
		}
	}
	// second checks the forms that begin with b0 at i, their second byte
	// at p[j]: as it is, after a line break, or the byte an escape
	// sequence there stands for.
	second := func(i int, b0 byte, j int) {
		if j == n {
			unfinished(i, b0)
			return
		}
		a := uint16(b0) << 8
		c := p[j]
		if l := m.pair(a | uint16(c)); len(l) > 0 {
			check(i, l)
		}
		if c == '\n' || c == '\r' {
			j++
			if c == '\r' {
				if j == n {
					unfinished(i, b0)
					return
				}
				if p[j] != '\n' {
					return
				}
				j++
			}
			if j == n {
				unfinished(i, b0)
				return
			}
			c = p[j]
			if l := m.pair(a | uint16(c)); len(l) > 0 {
				check(i, l)
			}
		}
		if isEscapeStart(c) {
			d, _, _, _, ok, part := unitAt(p, j)
			switch {
			case ok && d != c:
				if l := m.pair(a | uint16(d)); len(l) > 0 {
					check(i, l)
				}
			case part:
				unfinished(i, b0)
			}
		}
	}
	for i := m.nextHit(p, 0); i+1 < n; i = m.nextHit(p, i+1) {
		c0, c1 := p[i], p[i+1]
		k := uint16(c0)<<8 | uint16(c1)
		esc := isEscapeStart(c0)
		if !esc && plain[c1] {
			// The common case: the form's first two bytes are here as
			// they are.
			if i+2 < n && plain[p[i+2]] {
				if t := triple(c0, c1, p[i+2]); m.triples[t/64]&(1<<(t%64)) == 0 {
					continue
				}
			}
			if l := m.pair(k); len(l) > 0 {
				check(i, l)
			}
			continue
		}
		second(i, c0, i+1)
		if esc {
			// The form may begin with the byte the escape stands for.
			d, d2, nb, un, ok, part := unitAt(p, i)
			switch {
			case ok && nb > 1:
				// A rune: it stands for the form's first two bytes.
				if l := m.pair(uint16(d)<<8 | uint16(d2)); len(l) > 0 {
					check(i, l)
				}
			case ok:
				second(i, d, i+un)
			case part && sc.partials && i < partialAt:
				partialAt = i
			}
		}
	}
	// Only an unfinished occurrence may begin at the last byte.
	switch c := p[n-1]; c {
	case '+':
		unfinished(n-1, ' ')
	case '%', '\\':
		if sc.partials && n-1 < partialAt && len(m.forms) > 0 {
			partialAt = n - 1 // an escape of any byte
		}
	}
	unfinished(n-1, p[n-1])
	return covered, partialAt, startEnd
}

// nextHit is the first position from i on whose two bytes have their bit
// in pairs, or len(p)-1 when none has. It is the loop every byte of every
// text goes through, kept apart so that it compiles tight.
func (m *matcher) nextHit(p []byte, i int) int {
	for ; i+1 < len(p); i++ {
		k := uint16(p[i])<<8 | uint16(p[i+1])
		if m.pairs[k/64]&(1<<(k%64)) != 0 {
			return i
		}
	}
	return max(i, len(p)-1)
}

// startEdges marks, at p's start, the suffix of an edge form that p begins
// with (after what may be the cut end of an escape sequence, see
// escapeTail), and with sc.end also the part of one that p holds whole (p
// is a window inside one line), when that part is MinLen bytes or more.
// It returns the end of the furthest mark, and part when more bytes could
// still make a mark (p ends inside a suffix it may begin with).
func (m *matcher) startEdges(p []byte, sc scan, covered *[]bool) (end int, part bool) {
	st := edgeState{n: len(p), sc: sc, covered: covered}
	// The bytes at p's start that may belong to an escape's tail.
	limit := 0
	for limit < len(p) && limit < maxSkip && tailByte(p[limit]) {
		limit++
	}
	if limit == len(p) && sc.partials {
		// All of p may be the cut tail of an escape: a suffix may begin
		// after it, with bytes that have not come yet.
		st.part = true
	}
	for s := 0; s <= limit && s < len(p); s++ {
		if s > 0 && !escapeTail(p[:s]) {
			continue
		}
		st.s, st.done = s, -1
		c := p[s]
		switch {
		case s+1 == len(p):
			// One byte left: it can only begin a partial.
			if sc.partials && len(m.edgeRange(uint16(c)<<8, uint16(c)<<8|0xff)) > 0 {
				st.part = true
			}
		case p[s+1] == '+':
			m.tryEdges(p, &st, m.edgeKey(uint16(c)<<8|'+'))
			m.tryEdges(p, &st, m.edgeKey(uint16(c)<<8|' '))
		case !plain[p[s+1]]:
			// A line break or an escape sequence comes second.
			m.tryEdges(p, &st, m.edgeRange(uint16(c)<<8, uint16(c)<<8|0xff))
		default:
			if s+2 < len(p) && plain[p[s+2]] {
				if t := triple(c, p[s+1], p[s+2]); m.edgeTriples[t/64]&(1<<(t%64)) == 0 {
					break
				}
			}
			m.tryEdges(p, &st, m.edgeKey(uint16(c)<<8|uint16(p[s+1])))
		}
		if isEscapeStart(c) {
			b, _, _, _, ok, esc := unitAt(p, s)
			switch {
			case ok:
				m.tryEdges(p, &st, m.edgeRange(uint16(b)<<8, uint16(b)<<8|0xff))
			case esc:
				st.part = true
			}
		}
	}
	return st.end, st.part
}

// edgeState is what startEdges found so far.
type edgeState struct {
	n       int // len(p)
	sc      scan
	covered *[]bool // cover's, made when first needed
	s       int     // the position tried
	done    int32   // the last form a mark was made for at s
	end     int     // the end of the furthest mark
	part    bool    // more bytes could make a mark
}

// tryEdges compares the suffixes refs with p at st.s.
func (m *matcher) tryEdges(p []byte, st *edgeState, refs []edgeRef) {
	for _, e := range refs {
		if e.form == st.done {
			continue // its longest suffix was marked
		}
		r := compare(p, st.s, &m.forms[e.form], int(e.off))
		hi := -1
		switch {
		case r.end >= 0:
			hi = r.end
		case r.partial && st.sc.end && r.n >= MinLen:
			hi = r.last
		}
		if hi >= 0 {
			if *st.covered == nil {
				*st.covered = make([]bool, st.n)
			}
			for k := st.s; k < hi; k++ {
				(*st.covered)[k] = true
			}
			st.end, st.done = max(st.end, hi), e.form
		}
		if r.partial {
			st.part = true
		}
	}
}

// pair is byPair[k], without a map lookup when it is empty.
func (m *matcher) pair(k uint16) []int32 {
	if m.listed[k/64]&(1<<(k%64)) == 0 {
		return nil
	}
	return m.byPair[k]
}

// edgeKey is the edge suffixes whose first two bytes are k.
func (m *matcher) edgeKey(k uint16) []edgeRef {
	if m.edgeBits[k/64]&(1<<(k%64)) == 0 {
		return nil
	}
	r, ok := m.edgeAt[k]
	if !ok {
		return nil
	}
	return m.edges[r[0]:r[1]]
}

// edgeRange is the edge suffixes whose key is in [lo, hi].
func (m *matcher) edgeRange(lo, hi uint16) []edgeRef {
	i, _ := slices.BinarySearchFunc(m.edges, lo, func(e edgeRef, k uint16) int { return cmp.Compare(e.key, k) })
	j, _ := slices.BinarySearchFunc(m.edges[i:], hi, func(e edgeRef, k uint16) int {
		if e.key <= k {
			return -1
		}
		return 1
	})
	return m.edges[i : i+j]
}
