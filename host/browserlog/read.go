package browserlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
	"github.com/binkyhq/binky/host/redact"
)

// Query selects entries of a browser log.
type Query struct {
	// Service keeps one service's entries ("" keeps all).
	Service string
	// Since keeps entries at or after it (zero: no bound).
	Since time.Time
	// SinceUp keeps the entries after the last up mark.
	SinceUp bool
	// Last keeps the last n entries (0: all).
	Last int
	// Marks keeps the up marks too (for people they are noise).
	Marks bool
}

// Read returns the entries kept in dir's browser log, both generations,
// oldest first, that q selects, unredacted; truncated says Last left some
// out. A world with no browser log has no entries. Lines that do not read
// as entries are skipped.
func Read(dir string, q Query) (entries []Entry, truncated bool, err error) {
	var all []Entry
	for _, name := range []string{FileName + ".1", FileName} {
		es, err := readFile(filepath.Join(dir, name))
		if err != nil {
			return nil, false, err
		}
		all = append(all, es...)
	}
	entries, truncated = selectEntries(all, q)
	return entries, truncated, nil
}

// selectEntries is what q keeps of all, oldest first.
func selectEntries(all []Entry, q Query) (entries []Entry, truncated bool) {
	if q.SinceUp {
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].Kind == KindUp {
				all = all[i+1:]
				break
			}
		}
	}
	for _, e := range all {
		if e.Kind == KindUp && !q.Marks {
			continue
		}
		if q.Service != "" && e.Service != q.Service && e.Kind != KindUp {
			continue
		}
		if !q.Since.IsZero() && e.Time.Before(q.Since) {
			continue
		}
		entries = append(entries, e)
	}
	if q.Last > 0 && len(entries) > q.Last {
		entries, truncated = entries[len(entries)-q.Last:], true
	}
	return entries, truncated
}

// CountSinceUp is how many errors the pages reported since the world's
// last up (notes not counted).
func CountSinceUp(dir string) (int, error) {
	es, _, err := Read(dir, Query{SinceUp: true})
	n := 0
	for _, e := range es {
		if e.Kind.IsError() {
			n++
		}
	}
	return n, err
}

func readFile(path string) ([]Entry, error) {
	f, err := shareopen.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Kind != "" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// Redact masks every secret red knows in each entry's text.
func Redact(entries []Entry, red *redact.Redactor) {
	if red == nil {
		return
	}
	for i := range entries {
		e := &entries[i]
		e.Message = red.String(e.Message)
		e.Page = red.String(e.Page)
		e.Source = red.String(e.Source)
		e.Stack = red.String(e.Stack)
	}
}

// Format is an entry as `binky logs --browser` prints it: time, service,
// kind and message on one line, where it came from, then the stack
// indented.
func Format(e Entry, withService bool) string {
	var b strings.Builder
	b.WriteString(e.Time.Format(time.RFC3339))
	if withService && e.Service != "" {
		b.WriteString(" " + e.Service)
	}
	b.WriteString(" " + string(e.Kind))
	if e.Status != 0 {
		b.WriteString(" " + strconv.Itoa(e.Status))
	}
	b.WriteString(": ")
	b.WriteString(indent(e.Message))
	if e.Source != "" {
		b.WriteString("\n    at " + e.Source)
	}
	if e.Page != "" {
		b.WriteString("\n    page " + e.Page)
	}
	if st := strings.TrimSpace(e.Stack); st != "" && !strings.Contains(e.Message, st) {
		b.WriteString("\n    " + indent(st))
	}
	return b.String()
}

// indent puts four spaces before every line of s but the first.
func indent(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\n    ")
}
