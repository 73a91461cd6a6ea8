package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Event is one line of events.log. The first seven fields are always
// written (empty when they do not apply); the rest only when set.
type Event struct {
	// TS is when it happened; Emit fills it when zero and writes it in UTC.
	TS    time.Time `json:"ts"`
	Event string    `json:"event"`

	Project  string `json:"project"`
	Worktree string `json:"worktree"`
	Service  string `json:"service"`
	Adapter  string `json:"adapter"`
	// Error is the cause of a failure. It is redacted before it is written.
	Error string `json:"error"`

	// Step names the step of `up` or `down` (config, worktree, ports, …).
	Step string `json:"step,omitempty"`
	// Method says how something was done: a clone's method (reflink, copy,
	// template), a health probe's kind (http, tcp, exec), a stop's signal.
	Method     string `json:"method,omitempty"`
	PID        int    `json:"pid,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// Attempt counts restarts (service_restarting) or tries.
	Attempt int `json:"attempt,omitempty"`
	// PortLo and PortHi bound a port block (ports_reserved, ports_released).
	PortLo int `json:"port_lo,omitempty"`
	PortHi int `json:"port_hi,omitempty"`
	// Ports lists single ports, such as those found held (ports_held).
	Ports []int `json:"ports,omitempty"`
	// Passed is a verify run's outcome.
	Passed *bool `json:"passed,omitempty"`
	// Detail is a short free text (an adapter's stderr line, a changed
	// path). It is redacted like Error; it is never a config value.
	Detail string `json:"detail,omitempty"`
}

// MaxText bounds Error and Detail; longer text is cut (after redaction) and
// marked.
const MaxText = 4096

// ErrNoEvent is returned by ParseLine for a line that is not an event.
var ErrNoEvent = errors.New("not an event")

// ParseLine decodes one line of events.log.
func ParseLine(line []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, fmt.Errorf("parse event line: %w", err)
	}
	if e.Event == "" {
		return Event{}, fmt.Errorf("parse event line: %w: no event name", ErrNoEvent)
	}
	return e, nil
}

// IntPtr returns a pointer to v, for ExitCode.
func IntPtr(v int) *int { return &v }

// BoolPtr returns a pointer to v, for Passed.
func BoolPtr(v bool) *bool { return &v }

// Duration converts d to the DurationMS field's unit.
func Duration(d time.Duration) int64 { return d.Milliseconds() }
