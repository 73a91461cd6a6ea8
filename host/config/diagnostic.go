package config

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Severity is how bad a Diagnostic is.
type Severity string

// Severities.
const (
	// SeverityError makes the config unusable.
	SeverityError Severity = "error"
	// SeverityWarning flags a footgun; the config still works.
	SeverityWarning Severity = "warning"
	// SeverityNote says what binky will do with a setting that is not the
	// usual case (an absolute cwd, env PORT = ""); nothing to fix.
	SeverityNote Severity = "note"
)

// Diagnostic is one problem in a binky.toml.
type Diagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col,omitempty"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Hint says how to fix it.
	Hint string `json:"hint,omitempty"`
}

// String formats d as "file:line: error: message (hint)".
func (d Diagnostic) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s: %s", d.File, d.Line, d.Severity, d.Message)
	if d.Hint != "" {
		fmt.Fprintf(&b, " (%s)", d.Hint)
	}
	return b.String()
}

// Diagnostics is every problem found in one file, in file order.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Count returns the number of errors and of warnings (notes are
// neither).
func (ds Diagnostics) Count() (errors, warnings int) {
	for _, d := range ds {
		switch d.Severity {
		case SeverityError:
			errors++
		case SeverityWarning:
			warnings++
		}
	}
	return errors, warnings
}

// sortDiagnostics orders by line, then column, keeping discovery order for
// ties.
func sortDiagnostics(ds Diagnostics) {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].Line != ds[j].Line {
			return ds[i].Line < ds[j].Line
		}
		return ds[i].Col < ds[j].Col
	})
}

// oneLine makes s safe for a one-line message: control characters become
// escapes and very long text is cut.
func oneLine(s string) string {
	const max = 200
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n >= max {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r == 0x85:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x2028 || r == 0x2029 || r == 0xfeff || r == utf8.RuneError:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}
