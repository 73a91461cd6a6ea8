package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/state"
)

// World is one worktree's running world as the dashboard shows it.
type World struct {
	Project  string
	Worktree string
	Branch   string // the git branch, when it differs from Worktree
	Path     string // the worktree directory
	State    state.World
	// Reason says why a world is degraded or failed (which service, what
	// it did); "" when nothing is wrong.
	Reason   string
	Services []Service
	// Verify is the last `binky verify` result; nil when never run.
	Verify *Verify
	// Cost is what the world takes (status's cost); nil when unknown.
	Cost *api.Cost
	// Selection is the services the world runs when up chose some
	// ("profile frontend", "--only web", "--except worker"); "" for all.
	Selection string
	// Host names the host (of hosts.toml) a world runs on when it is
	// another machine's, reached from here: its URLs are the ones that
	// answer here, and the page shows it apart. "" for this machine's.
	Host string
}

// Service is one service of a world.
type Service struct {
	Name    string
	Kind    string // "cmd" or "adapter"
	Adapter string // adapter name, for adapter services
	State   state.Service
	Port    int    // 0 when it has none
	URL     string // proxied URL, "" when the service has no url
	Detail  string // a short note: the slice's address, the last error…
	// Reason says why the service is not running as it should
	// ("unhealthy: GET … 503 for 40s", "failed: exited 1"); "" when fine.
	Reason string
	// Warning is a note that is not a failure: a port that listens beyond
	// loopback, reachable from other machines.
	Warning string
	// LogTail is the last lines of the log of a service that ended or
	// waits to restart after a crash: the cause the state does not say.
	LogTail []string
	// LeftOut says why the world's selection leaves the service out
	// ("not in profile frontend"); "" when it is in.
	LeftOut string
}

// Verify is the outcome of the last verify run of a world.
type Verify struct {
	Passed bool
	At     time.Time
	// Summary is a short line, e.g. the command that failed.
	Summary string
}

// Event is one line of events.log.
type Event struct {
	Time     time.Time
	Event    string
	Project  string
	Worktree string
	Service  string
	Adapter  string
	Error    string
}

// Source is what the dashboard needs from the daemon.
type Source interface {
	Worlds(ctx context.Context) ([]World, error)
	RecentEvents(ctx context.Context, n int) ([]Event, error)
}

// Options configure a Handler.
type Options struct {
	Logger hclog.Logger
	// Events is how many recent events to show; 30 when zero.
	Events int
	// Refresh is how often the page reloads itself; 5s when zero, never
	// when negative.
	Refresh time.Duration
	// Now is the clock for "3m ago"; time.Now when nil.
	Now func() time.Time
	// Redactor masks the known secrets in every free text the page shows
	// (service details, verify summaries, event errors, read errors), in
	// case the source let one through; nil shows them as they come.
	Redactor *redact.Redactor
}

// Handler serves the dashboard page.
type Handler struct {
	src  Source
	log  hclog.Logger
	opts Options
}

// New returns the dashboard handler reading from src.
func New(src Source, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Events == 0 {
		opts.Events = 30
	}
	if opts.Refresh == 0 {
		opts.Refresh = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Handler{src: src, log: opts.Logger, opts: opts}
}

// ServeHTTP renders the page for GET / (and HEAD).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	d := h.build(ctx)
	status := http.StatusOK
	if d.Error != "" {
		status = http.StatusServiceUnavailable
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		h.log.Error("render dashboard", "error", err)
		http.Error(w, "the dashboard could not be rendered; see the daemon log", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		_, _ = w.Write(buf.Bytes())
	}
}

// build gathers the page data; a source error becomes a banner, not a crash.
func (h *Handler) build(ctx context.Context) pageData {
	now := h.opts.Now()
	d := pageData{Now: now}
	if h.opts.Refresh > 0 {
		d.Refresh = max(1, int(h.opts.Refresh/time.Second))
	}
	worlds, err := h.src.Worlds(ctx)
	if err != nil {
		h.log.Warn("dashboard: read worlds", "error", err)
		d.Error = "could not read worlds: " + h.opts.Redactor.String(err.Error())
	}
	worlds = slices.Clone(worlds) // never reorder the source's slice
	slices.SortFunc(worlds, func(a, b World) int {
		return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Project, b.Project), cmp.Compare(a.Worktree, b.Worktree))
	})
	for _, wd := range worlds {
		v := worldView{World: wd}
		v.Reason = h.opts.Redactor.String(v.Reason)
		for _, s := range wd.Services {
			s.Detail = h.opts.Redactor.String(s.Detail)
			s.Reason = h.opts.Redactor.String(s.Reason)
			s.Warning = h.opts.Redactor.String(s.Warning)
			if len(s.LogTail) > 0 {
				// Masked as one text: a secret wrapped over lines too.
				s.LogTail = strings.Split(h.opts.Redactor.String(strings.Join(s.LogTail, "\n")), "\n")
			}
			link := strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://")
			v.Services = append(v.Services, serviceView{Service: s, LinkText: link})
			// A slice is not a service that runs: the header counts them
			// apart, so "3 of 7 services running" means processes. Another
			// host's world is not this machine's to count.
			switch {
			case wd.Host != "":
			case s.LeftOut != "":
				// Not part of the world as chosen: counted nowhere.
			case s.Kind == "adapter":
				d.Slices++
				if s.State != state.ServiceProvisioned {
					d.SlicesNotReady++
				}
			default:
				d.Services++
				if serviceUp(s.State) {
					d.Running++
				}
			}
		}
		v.CostLine = costLine(wd.Cost)
		if wd.Verify != nil {
			vr := *wd.Verify
			vr.Summary = h.opts.Redactor.String(vr.Summary)
			v.Verify = &vr
			v.VerifyAgo = ago(now, vr.At)
		}
		if wd.Host != "" {
			d.Remote = append(d.Remote, v)
			continue
		}
		d.Worlds = append(d.Worlds, v)
	}
	events, err := h.src.RecentEvents(ctx, h.opts.Events)
	if err != nil {
		h.log.Warn("dashboard: read events", "error", err)
		if d.Error == "" {
			d.Error = "could not read events: " + h.opts.Redactor.String(err.Error())
		}
	}
	events = slices.DeleteFunc(slices.Clone(events), chatter)
	slices.SortStableFunc(events, func(a, b Event) int { return b.Time.Compare(a.Time) })
	if len(events) > h.opts.Events {
		events = events[:h.opts.Events]
	}
	for _, e := range events {
		d.Events = append(d.Events, eventView{Name: e.Event, Project: e.Project, Worktree: e.Worktree,
			Service: e.Service, Adapter: e.Adapter, Error: h.opts.Redactor.String(e.Error), Class: messageClass(e),
			Ago: ago(now, e.Time), Stamp: e.Time.Format(time.RFC3339)})
	}
	return d
}

type pageData struct {
	Now     time.Time
	Refresh int
	Error   string
	Worlds  []worldView
	// Remote are other hosts' worlds reached from here, shown in their
	// own section.
	Remote   []worldView
	Services int // processes (cmd services)
	Running  int
	// Slices counts the adapters' slices, SlicesNotReady those not
	// provisioned.
	Slices, SlicesNotReady int
	Events                 []eventView
}

type worldView struct {
	World
	Services  []serviceView
	VerifyAgo string
	// CostLine is the world's cost in words: memory, CPU, disk, slices.
	CostLine string
}

// eventView flattens an Event for the template (an embedded Event would
// shadow its own Event field).
type eventView struct {
	Name, Project, Worktree, Service, Adapter, Error string
	Class                                            string // "err" for an error, "detail" for a note
	Ago, Stamp                                       string
}

// chatter reports an adapter's stderr whose every line is a diagnostic
// below warning level (go-plugin's "[DEBUG] plugin: …" lines, an
// adapter's INFO lines): the page leaves these out of Recent events
// (events.log keeps them).
func chatter(e Event) bool {
	return e.Event == "adapter_stderr" && onlyChatter(e.Error)
}

// messageClass says how an event's text is shown: an error, or for the
// events that have text but are no failure, a note.
func messageClass(e Event) string {
	if chatter(e) {
		return "detail"
	}
	return "err"
}

// onlyChatter reports whether every non-empty line of text carries an
// hclog level below WARN ("[DEBUG]", "[TRACE]", "[INFO]"), after the
// "<call>: " prefix the daemon puts before an adapter's stderr.
func onlyChatter(text string) bool {
	seen := false
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		seen = true
		if !strings.Contains(line, "[DEBUG]") && !strings.Contains(line, "[TRACE]") && !strings.Contains(line, "[INFO]") {
			return false
		}
	}
	return seen
}

// serviceView adds the link text: the URL without its scheme.
type serviceView struct {
	Service
	LinkText string
}

// ago is a short relative time: "just now", "42s ago", "5m ago", "3h ago",
// "2d ago"; "" for a zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < 5*time.Second:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
	}
}

var _ http.Handler = (*Handler)(nil)
