package adapter

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/binkyhq/binky/sdk/client"
	"github.com/hashicorp/go-hclog"
)

// Defaults for Options.
const (
	DefaultTimeout  = 60 * time.Second
	DescribeTimeout = 10 * time.Second
)

// OneShotEnv is the environment switch that forces the one-shot tier (set it
// to 1), for debugging an adapter that also serves RPC.
const OneShotEnv = "BINKY_ADAPTER_ONESHOT"

// Prefix starts the file name of every adapter binary.
const Prefix = "binky-adapter-"

// CacheFile is the describe cache, under Options.Home.
const CacheFile = "adapters.cache.json"

// Options configure a Host.
type Options struct {
	// Home is the state directory ($BINKY_HOME). Adapters in Home/adapters
	// are found after those on PATH; the describe cache lives in Home.
	Home string
	// PathEnv is the PATH searched for adapters and handed to them, unless
	// a call's context carries the caller's (WithCallerPath). Empty: the
	// process's PATH.
	PathEnv string
	// SystemDirs are searched after Home/adapters: where distribution
	// packages install adapters. Nil: DefaultSystemDirs()
	// (/usr/lib/binky/adapters on Unix); empty and non-nil: none.
	SystemDirs []string
	// Environ is the environment the adapter's minimal one is cut from
	// (PATH, HOME, TMPDIR, LANG, LC_*). Nil: os.Environ().
	Environ []string
	// Logger receives the host's own messages. Nil: discarded.
	Logger hclog.Logger
	// Redact replaces secret values in the adapter's stderr before it is
	// handed to OnStderr (or logged). Nil: the text is passed unchanged.
	Redact func(string) string
	// OnStderr receives what an adapter wrote on stderr during a call,
	// redacted. Nil: it is logged at debug level.
	OnStderr func(adapter, call, text string)
	// DefaultTimeout is every call's deadline unless Open is given one.
	// Zero: DefaultTimeout (60 s).
	DefaultTimeout time.Duration
	// DescribeTimeout bounds each describe run during discovery. Zero:
	// DescribeTimeout (10 s).
	DescribeTimeout time.Duration
	// OneShot forces the one-shot tier. It is also forced when the
	// environment has BINKY_ADAPTER_ONESHOT=1.
	OneShot bool
}

// Host discovers adapter binaries and opens connections to them. It is safe
// for concurrent use.
type Host struct {
	home            string
	pathEnv         string
	systemDirs      []string
	env             []string // the adapters' minimal environment, without PATH
	log             hclog.Logger
	redact          func(string) string
	onStderr        func(adapter, call, text string)
	timeout         time.Duration
	describeTimeout time.Duration
	oneShot         bool

	cacheMu sync.Mutex // serialises reading and writing the cache file

	mu       sync.Mutex
	known    *describeCache          // describes (and failures) this process saw
	inflight map[string]*describeRun // describes running now, by path
}

// New builds a Host. It touches nothing on disk until the first List, Find
// or Open.
func New(opts Options) *Host {
	h := &Host{
		home:            opts.Home,
		pathEnv:         opts.PathEnv,
		systemDirs:      opts.SystemDirs,
		log:             opts.Logger,
		redact:          opts.Redact,
		onStderr:        opts.OnStderr,
		timeout:         opts.DefaultTimeout,
		describeTimeout: opts.DescribeTimeout,
		oneShot:         opts.OneShot || os.Getenv(OneShotEnv) == "1",
		known:           newCache(),
		inflight:        map[string]*describeRun{},
	}
	if h.pathEnv == "" {
		h.pathEnv = os.Getenv("PATH")
	}
	if h.systemDirs == nil {
		h.systemDirs = DefaultSystemDirs()
	}
	if h.log == nil {
		h.log = hclog.NewNullLogger()
	}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	if h.describeTimeout <= 0 {
		h.describeTimeout = DescribeTimeout
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	h.env = client.MinimalEnv(environ)
	return h
}

// Where a search directory comes from, as Info.Origin says.
const (
	OriginPath   = "PATH"   // a directory of the caller's PATH
	OriginHome   = "home"   // $BINKY_HOME/adapters
	OriginSystem = "system" // a system adapter directory (SystemDirs)
)

// callerPathKey carries the caller's PATH in a context.
type callerPathKey struct{}

// WithCallerPath returns ctx carrying the PATH of the caller a call serves
// (the daemon takes it from the caller's forwarded environment). Discovery
// under ctx searches that PATH instead of Options.PathEnv, and adapters
// started under ctx get it, so an adapter the caller put on their PATH
// after the daemon started is found. An empty path leaves ctx as it is.
func WithCallerPath(ctx context.Context, path string) context.Context {
	if path == "" {
		return ctx
	}
	return context.WithValue(ctx, callerPathKey{}, path)
}

// pathFor is the PATH a call under ctx searches: the caller's, else the
// host's.
func (h *Host) pathFor(ctx context.Context) string {
	if p, ok := ctx.Value(callerPathKey{}).(string); ok && p != "" {
		return p
	}
	return h.pathEnv
}

// searchDir is one directory discovery reads, and why.
type searchDir struct {
	dir    string
	origin string
}

// dirs are the directories searched, in order: PATH (the caller's, see
// WithCallerPath), then Home/adapters, then the system directories.
func (h *Host) dirs(ctx context.Context) []searchDir {
	var out []searchDir
	seen := map[string]bool{}
	add := func(d, origin string) {
		if d == "" {
			return
		}
		c := filepath.Clean(d)
		if !seen[c] {
			seen[c] = true
			out = append(out, searchDir{dir: c, origin: origin})
		}
	}
	for _, d := range filepath.SplitList(h.pathFor(ctx)) {
		add(d, OriginPath)
	}
	if h.home != "" {
		add(filepath.Join(h.home, "adapters"), OriginHome)
	}
	for _, d := range h.systemDirs {
		add(d, OriginSystem)
	}
	return out
}

// binary is how every call reaches an adapter: the minimal environment
// (with PATH, the caller's when ctx carries it) and the stderr hand-off
// with redaction.
func (h *Host) binary(ctx context.Context, path, adapter string, call func() string) *client.Binary {
	return &client.Binary{
		Path:   path,
		Env:    client.SetEnv(h.env, "PATH", h.pathFor(ctx)),
		Logger: h.log.Named("adapter").With("adapter", adapter),
		Stderr: func(b []byte) { h.stderr(adapter, call(), b) },
	}
}

func (h *Host) stderr(adapter, call string, b []byte) {
	text := string(b)
	if h.redact != nil {
		text = h.redact(text)
	}
	if h.onStderr != nil {
		h.onStderr(adapter, call, text)
		return
	}
	h.log.Debug("adapter stderr", "adapter", adapter, "call", call, "text", text)
}
