package world

import (
	"strings"
	"unicode/utf8"

	"github.com/binkyhq/binky/host/admission"
)

// maxReason bounds a recorded reason: status shows it on one line.
const maxReason = 400

// OneLine makes an error's text a reason: its first line, and each next
// line while the one before ends in ":" (a driver's error often puts the
// part that matters — the address it could not reach — on the next line;
// what follows a complete first line, such as a log tail, is left out),
// blanks squeezed, at most maxReason bytes (cut on a rune boundary, "…").
func OneLine(s string) string {
	lines := strings.Split(s, "\n")
	n := 1
	for n < len(lines) && strings.HasSuffix(strings.TrimSpace(lines[n-1]), ":") {
		n++
	}
	s = strings.Join(strings.Fields(strings.Join(lines[:n], " ")), " ")
	if len(s) <= maxReason {
		return s
	}
	cut := maxReason
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Key names a world in the admission queue and the daemon's locks.
func Key(project, worktree string) string { return admission.Key(project, worktree) }
