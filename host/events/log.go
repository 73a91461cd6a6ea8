package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/binkyhq/binky/host/redact"
)

// Log appends events to events.log. It is safe for concurrent use, and
// several processes may append to the same file: each event is one write to
// a file opened with O_APPEND (on Windows also under the file's lock:
// append_windows.go). A nil *Log drops every event.
type Log struct {
	path string
	r    *redact.Redactor
	now  func() time.Time

	mu sync.Mutex
	f  *os.File
}

// Open opens (creating it, mode 0600, and its directory) the event log at
// path. Text fields are redacted through r, which may be nil.
func Open(path string, r *redact.Redactor) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	return &Log{path: path, r: r, now: time.Now, f: f}, nil
}

// Path is the file the log appends to.
func (l *Log) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// Emit appends e as one line. A zero TS is set to now; every text field is
// redacted, and Error and Detail are cut to MaxText bytes.
func (l *Log) Emit(e Event) error {
	if l == nil {
		return nil
	}
	if e.Event == "" {
		return fmt.Errorf("emit event to %s: %w: no event name", l.path, ErrNoEvent)
	}
	if e.TS.IsZero() {
		e.TS = l.now()
	}
	e.TS = e.TS.UTC()
	for _, f := range []*string{&e.Event, &e.Project, &e.Worktree, &e.Service, &e.Adapter, &e.Step, &e.Method} {
		*f = l.r.String(*f)
	}
	e.Error = cut(l.r.String(e.Error), MaxText)
	e.Detail = cut(l.r.String(e.Detail), MaxText)

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil { // Encode ends the line with '\n'
		return fmt.Errorf("emit %s event to %s: %w", e.Event, l.path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("emit %s event to %s: log is closed", e.Event, l.path)
	}
	if err := appendLine(l.f, buf.Bytes()); err != nil {
		return fmt.Errorf("emit %s event to %s: %w", e.Event, l.path, err)
	}
	return nil
}

// Close closes the file. Emit after Close returns an error.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("close event log %s: %w", l.path, err)
	}
	return nil
}

const truncMark = "…(cut)"

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len(truncMark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + truncMark
}
