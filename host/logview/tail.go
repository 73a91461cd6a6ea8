package logview

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/supervisor"
)

// Dir is where a world's service logs live under home.
func Dir(home, project, worktree string) string {
	return filepath.Join(home, "logs", project, worktree)
}

// Query bounds what Tail returns.
type Query struct {
	// Lines is how many lines to return at most (the last ones).
	Lines int
	// Grep, when set, keeps only the lines it matches; it is matched
	// against the redacted text, so it cannot find a secret.
	Grep *regexp.Regexp
	// MaxBytes bounds the returned text; the oldest lines go first.
	MaxBytes int
}

// contextLines is how many lines before the selected ones Tail reads and
// redacts with them, so that a multi-line secret (a PEM key) that begins
// shortly before them is recognised whole and becomes one mask. A longer
// one is still masked line by line (see package redact): the margin only
// makes the common case read better.
const contextLines = 64

// Tail is the redacted end of one service's log (its rolled generations
// included) that q selects, and whether lines were left out to fit
// q.Lines or q.MaxBytes. A log that does not exist yet is empty.
//
// The lines are redacted as one text that begins up to contextLines
// before them, and then selected: a secret masked whole counts as one
// line.
func Tail(path string, red *redact.Redactor, q Query) (lines []string, truncated bool, err error) {
	n := 0
	if q.Lines > 0 {
		// One more tells whether lines were left out.
		n = q.Lines + 1 + contextLines
	}
	if q.Grep != nil {
		n = 0 // grep reads all that is kept, then keeps the last matches
	}
	raw, err := supervisor.ReadLogs(path, n)
	if err != nil {
		return nil, false, err
	}
	if len(raw) == 0 {
		return nil, false, nil
	}
	// Redacted as one text, so a secret wrapped over lines is found. Its
	// start is a window edge: a secret that began before it has the part
	// that is here masked line by line.
	all := strings.Split(red.String(strings.Join(raw, "\n")), "\n")
	if q.Grep != nil {
		kept := all[:0]
		for _, l := range all {
			if q.Grep.MatchString(l) {
				kept = append(kept, l)
			}
		}
		all = kept
	}
	if q.Lines > 0 && len(all) > q.Lines {
		all, truncated = all[len(all)-q.Lines:], true
	}
	if q.MaxBytes > 0 {
		size := 0
		i := len(all)
		for i > 0 && size+len(all[i-1])+1 <= q.MaxBytes {
			size += len(all[i-1]) + 1
			i--
		}
		if i > 0 {
			all, truncated = all[i:], true
		}
	}
	return all, truncated, nil
}
