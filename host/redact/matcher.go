package redact

// matcher finds the registered forms in a text in one pass, whatever their
// number: a bitset over the first two bytes of every form says at which
// positions a form may start, and only there are the forms that start with
// those two bytes compared.
//
// A form also matches with a line break ("\n" or "\r\n") between any two
// of its bytes, so a secret that a program wrapped over several lines
// (base64 at 76 columns, a hex dump) is still found. At most one line
// break may sit in each gap, so an occurrence spans at most
// 3*len(form)-2 bytes.
type matcher struct {
	forms []string
	// pairs has bit a<<8|b set when some form starts with a then b (or a
	// then a line break, which may continue it).
	pairs [1 << 16 / 64]uint64
	// byPair lists, per first two bytes, the forms to compare (indices
	// into forms, longest first); byFirst the same per first byte, for a
	// position at the very end of the text.
	byPair  map[uint16][]int32
	byFirst [256][]int32
	// span is the most bytes an occurrence of a form can span.
	span int
}

func newMatcher(forms []string) *matcher {
	m := &matcher{forms: forms, byPair: map[uint16][]int32{}}
	add := func(k uint16, i int32) {
		m.pairs[k/64] |= 1 << (k % 64)
		if l := m.byPair[k]; len(l) == 0 || l[len(l)-1] != i {
			m.byPair[k] = append(l, i)
		}
	}
	for i, f := range forms {
		a := uint16(f[0]) << 8
		add(a|uint16(f[1]), int32(i))
		add(a|'\n', int32(i))
		add(a|'\r', int32(i))
		m.byFirst[f[0]] = append(m.byFirst[f[0]], int32(i))
		m.span = max(m.span, 3*len(f)-2)
	}
	return m
}

// compare matches form f against p from i. It returns the end of the
// occurrence, or -1; partial says p ended while f could still match.
func compare(p []byte, i int, f string) (end int, partial bool) {
	j, k := i, 0
	gap := false // a line break was skipped since the last form byte
	for k < len(f) {
		if j == len(p) {
			return -1, true
		}
		switch c := p[j]; {
		case c == f[k]:
			j, k, gap = j+1, k+1, false
		case k > 0 && !gap && c == '\n':
			j, gap = j+1, true
		case k > 0 && !gap && c == '\r':
			if j+1 == len(p) {
				return -1, true
			}
			if p[j+1] != '\n' {
				return -1, false
			}
			j, gap = j+2, true
		default:
			return -1, false
		}
	}
	return j, false
}

// cover marks every byte of p that lies inside an occurrence of a form,
// overlapping occurrences included; it returns nil when nothing matched.
// With partials it also returns the first position where p's end leaves an
// occurrence unfinished (more bytes could complete it), else len(p).
func (m *matcher) cover(p []byte, partials bool) (covered []bool, partialAt int) {
	partialAt = len(p)
	marked := 0 // covered[:marked] holds every mark made so far
	check := func(i int, cands []int32) {
		for _, fi := range cands {
			end, partial := compare(p, i, m.forms[fi])
			if partial && partials && i < partialAt {
				partialAt = i
			}
			if end < 0 {
				continue
			}
			if covered == nil {
				covered = make([]bool, len(p))
			}
			// Occurrences are found left to right: only the part past
			// what earlier ones marked is new (a secret that repeats one
			// byte overlaps itself at every position).
			for k := max(i, marked); k < end; k++ {
				covered[k] = true
			}
			marked = max(marked, end)
		}
	}
	n := len(p)
	if n == 0 {
		return nil, partialAt
	}
	for i := 0; i+1 < n; i++ {
		k := uint16(p[i])<<8 | uint16(p[i+1])
		if m.pairs[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		check(i, m.byPair[k])
	}
	if partials {
		check(n-1, m.byFirst[p[n-1]])
	}
	return covered, partialAt
}
