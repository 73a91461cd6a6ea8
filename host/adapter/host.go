package adapter

import (
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
	// PathEnv is the PATH searched for adapters and handed to them. Empty:
	// the process's PATH.
	PathEnv string
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
	env             []string
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
	h.env = client.SetEnv(client.MinimalEnv(environ), "PATH", h.pathEnv)
	return h
}

// dirs are the directories searched, in order: PATH, then Home/adapters.
func (h *Host) dirs() []string {
	var out []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" {
			return
		}
		c := filepath.Clean(d)
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, d := range filepath.SplitList(h.pathEnv) {
		add(d)
	}
	if h.home != "" {
		add(filepath.Join(h.home, "adapters"))
	}
	return out
}

// binary is how every call reaches an adapter: the minimal environment and
// the stderr hand-off with redaction.
func (h *Host) binary(path, adapter string, call func() string) *client.Binary {
	return &client.Binary{
		Path:   path,
		Env:    h.env,
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
