package browserlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind says what an entry reports.
type Kind string

// The kinds a page reports, and Binky's own.
const (
	KindConsole   Kind = "console"   // console.error(…)
	KindError     Kind = "error"     // an uncaught exception
	KindRejection Kind = "rejection" // an unhandled promise rejection
	KindFetch     Kind = "fetch"     // a fetch that failed, or answered 400 or more
	// KindNote is Binky's own word: a page the script was not put into,
	// entries dropped past the rate. A page cannot send one.
	KindNote Kind = "note"
	// KindUp marks an up of the world: "since up" counts after the last
	// one. It is no error, and readers for people skip it.
	KindUp Kind = "up"
)

// IsError reports whether k is something a page reported (not a note or a
// mark).
func (k Kind) IsError() bool {
	switch k {
	case KindConsole, KindError, KindRejection, KindFetch:
		return true
	}
	return false
}

// Entry is one line of the browser log.
type Entry struct {
	Time time.Time `json:"time"`
	// Service is the url service whose page reported it.
	Service string `json:"service,omitempty"`
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// Page is the address of the page that reported it.
	Page string `json:"page,omitempty"`
	// Source is where an uncaught error was thrown: script:line:column.
	Source string `json:"source,omitempty"`
	Stack  string `json:"stack,omitempty"`
	// Status is a failed fetch's HTTP status; 0 when it got no answer.
	Status int `json:"status,omitempty"`
}

// The bounds of what a page may post.
const (
	// MaxBody is the most a page may post at once.
	MaxBody = 64 << 10
	// MaxPerPost is the most entries one post records; more are dropped.
	MaxPerPost = 20
	// The longest message, stack, page address and source kept; a longer
	// one is cut, with "…" at the end.
	MaxMessage = 2 << 10
	MaxStack   = 4 << 10
	MaxPage    = 1 << 10
	MaxSource  = 512
)

// posted is an entry as a page posts it.
type posted struct {
	Kind    string          `json:"kind"`
	Message json.RawMessage `json:"message"`
	URL     string          `json:"url"`
	Source  string          `json:"source"`
	Stack   string          `json:"stack"`
	Status  int             `json:"status"`
}

// ErrBadPost is a post that is not a JSON array of entries.
var ErrBadPost = errors.New("not a JSON array of browser log entries")

// Parse reads what a page posts: a JSON array of objects with kind
// (console, error, rejection or fetch), message, url, source, stack and
// status. Unknown kinds and empty messages are skipped, fields cut to
// their bounds, at most MaxPerPost entries kept; dropped says how many were
// left out. Entries get no time or service: the caller knows those.
func Parse(body []byte) (entries []Entry, dropped int, err error) {
	if len(body) > MaxBody {
		return nil, 0, ErrBadPost
	}
	var in []posted
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		return nil, 0, ErrBadPost
	}
	for _, p := range in {
		k := Kind(p.Kind)
		if !k.IsError() {
			dropped++
			continue
		}
		msg := message(p.Message)
		if msg == "" {
			dropped++
			continue
		}
		if len(entries) == MaxPerPost {
			dropped++
			continue
		}
		e := Entry{
			Kind:    k,
			Message: clip(msg, MaxMessage),
			Page:    clip(oneLine(p.URL), MaxPage),
			Source:  clip(oneLine(p.Source), MaxSource),
			Stack:   clip(p.Stack, MaxStack),
		}
		if k == KindFetch && p.Status > 0 && p.Status < 1000 {
			e.Status = p.Status
		}
		entries = append(entries, e)
	}
	return entries, dropped, nil
}

// message is a posted message: a string as it is, anything else as its
// JSON.
func message(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return strings.TrimSpace(string(raw))
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut, and
// makes it valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// oneLine keeps the first line of s.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
