package api

import (
	"time"

	"github.com/binkyhq/binky/host/state"
)

// What status answers: the worlds, their services and last verify, the
// admission queue and pressure, and which home and proxy answered.

// World describes one worktree's world.
type World struct {
	// Host is set on a world of another machine that this home reaches
	// (binky --host HOST up): the host's name in hosts.toml.
	Host     string `json:"host,omitempty"`
	Project  string `json:"project"`
	Worktree string `json:"worktree"`
	Branch   string `json:"branch"`
	Path     string `json:"path,omitempty"` // always set but in a status table's reply (ForTable)
	Repo     string `json:"repo,omitempty"` // the main worktree of the world's repository
	// State is the world's state as status reports it (host/state): the
	// recorded one, or degraded or failed for an up world whose services
	// gave up, queued while its up waits for admission.
	State state.World `json:"state"`
	// Reason says why a world is degraded or failed: which service, which
	// step, what the server or the probe answered.
	Reason string `json:"reason,omitempty"`
	// Plan is what up did (or, with --dry-run, would do) to a world that
	// existed: services started, restarted, stopped, slices provisioned,
	// kept or pruned, each with why.
	Plan *Plan `json:"plan,omitempty"`
	// Left lists, after remove --force, each slice that could not be
	// destroyed and was forgotten (which, on which server, and why), and
	// processes it could not end or a worktree git would not remove.
	Left     []string  `json:"left,omitempty"`
	Ports    [2]int    `json:"ports"`
	Services []Service `json:"services"`
	Verify   *Verify   `json:"verify,omitempty"`
	Noop     bool      `json:"noop,omitempty"`
	// Queue is set while the world's up waits for admission (State is
	// state.WorldQueued).
	Queue *Queue `json:"queue,omitempty"`
	// Suspended says why a suspended world was stopped: "pressure" or
	// "idle".
	Suspended string `json:"suspended,omitempty"`
	// Selection is the services the world runs when up chose some
	// ("profile frontend", "--only web,api", "--except worker"); "" for
	// all of them.
	Selection string `json:"selection,omitempty"`
	// Cost is what the world takes on the machine (status only).
	Cost *Cost `json:"cost,omitempty"`
	// StableName is the name of [project] stable_names the world was
	// handed, in place of its worktree name in its hostnames; "" when
	// none.
	StableName string `json:"stable_name,omitempty"`
}

// Queue is a world's place in the admission queue.
type Queue struct {
	Position int    `json:"position"` // 1 is next
	Reason   string `json:"reason"`   // e.g. "max_parallel 4 reached (machine)"
	// Limit is the bound that holds it: machine.max_parallel,
	// project.max_parallel, machine.ram_reserve, project.ram_reserve,
	// machine.disk_headroom, project.disk_headroom, or queue (it would fit
	// but waits behind one the machine holds).
	Limit string `json:"limit,omitempty"`
}

// Pressure is the machine's free RAM and disk against the reserves, and
// how many worlds hold or wait for a place.
type Pressure struct {
	RAMFreePct   float64 `json:"ram_free_pct"`  // -1 when unknown
	RAMReserve   float64 `json:"ram_reserve"`   // percent
	DiskFreeGB   float64 `json:"disk_free_gb"`  // -1 when unknown
	DiskHeadroom float64 `json:"disk_headroom"` // GB
	MaxParallel  int     `json:"max_parallel"`  // 0: no bound
	Running      int     `json:"running"`       // worlds up, starting or suspended
	Queued       int     `json:"queued"`
	// The jobs queue (binky run, verify checks): the machine's bound, the
	// commands running and those waiting.
	Jobs        int `json:"jobs"`
	JobsRunning int `json:"jobs_running"`
	JobsQueued  int `json:"jobs_queued"`
}

// ReserveArgs sets machine-wide admission bounds (nil leaves a value as it
// is). Dir, when set, adds the bounds of the project the caller stands in.
type ReserveArgs struct {
	RAM         *float64 `json:"ram,omitempty"`
	Disk        *float64 `json:"disk,omitempty"`
	MaxParallel *int     `json:"max_parallel,omitempty"`
	Dir         string   `json:"dir,omitempty"`
}

// ReserveResult is every admission bound, where it comes from, and the
// machine's pressure now.
type ReserveResult struct {
	Values   []ReserveValue `json:"values"`
	Pressure Pressure       `json:"pressure"`
}

// ReserveValue is one bound: its value and its source ("default",
// "registry (binky reserve)" or a binky.toml).
type ReserveValue struct {
	Name        string  `json:"name"`
	Value       float64 `json:"value"`
	Unit        string  `json:"unit,omitempty"`
	Source      string  `json:"source"`
	Project     float64 `json:"project,omitempty"` // the caller's project's own value, when it sets one
	ProjectFile string  `json:"project_file,omitempty"`
}

// Service describes one service of a world. Address is redacted.
type Service struct {
	Name     string         `json:"name"`
	Kind     string         `json:"kind,omitempty"` // always set but in a status table's reply (ForTable)
	State    state.Service  `json:"state"`
	Pid      int            `json:"pid,omitempty"`
	Warning  string         `json:"warning,omitempty"` // a running service listening beyond loopback: reachable from other machines
	Port     int            `json:"port,omitempty"`
	Ports    map[string]int `json:"ports,omitempty"`
	URL      string         `json:"url,omitempty"`
	Adapter  string         `json:"adapter,omitempty"`
	Address  string         `json:"address,omitempty"`
	Restarts int            `json:"restarts,omitempty"`
	Error    string         `json:"error,omitempty"`
	// Reason says why the service is not running as it should, in one
	// line: "unhealthy: <probe>: status 503 for 40s", "failed: exit
	// status 1", "provisioning failed: … connection refused"; "" when it is.
	Reason string `json:"reason,omitempty"`
	// LogTail is the last lines of a failed service's log, redacted.
	LogTail []string `json:"log_tail,omitempty"`
	// Clone is how the slice was cloned from its golden template, as the
	// adapter said ("file_copy, copy-on-write"); "" when it was not.
	Clone string `json:"clone,omitempty"`
	// LeftOut says why the world's selection of services leaves this one
	// out ("not in profile frontend"); "" when it is in.
	LeftOut string `json:"left_out,omitempty"`
}

// ReasonWaits is the Reason of a wake service (wake = true) that does not
// run: its first request through the proxy starts it.
const ReasonWaits = "starts on its first request"

// Verify is the last verify run of a world.
type Verify struct {
	Passed   bool      `json:"passed"`
	Commit   string    `json:"commit"`
	Dirty    bool      `json:"dirty"`
	At       time.Time `json:"at"`
	Duration int64     `json:"duration_ms"`
	Stale    bool      `json:"stale"`
	Checks   []Check   `json:"checks,omitempty"`
	// BrowserErrors is how many errors the world's pages reported since
	// its last up ([agents] browser_logs), as verify ends; absent when
	// the project keeps no browser log.
	BrowserErrors *int `json:"browser_errors,omitempty"`
}

// Check is one verify command's outcome.
type Check struct {
	Cmd      string `json:"cmd"`
	ExitCode int    `json:"exit_code"`
	Duration int64  `json:"duration_ms"`
	Passed   bool   `json:"passed"`
}

// StatusResult lists worlds.
type StatusResult struct {
	Worlds []World `json:"worlds"`
	// Remote are the worlds of other hosts this home reaches (binky
	// --host HOST up), each with its Host: listed apart, so what walks
	// Worlds acts on this machine's only.
	Remote   []World   `json:"remote,omitempty"`
	Pressure *Pressure `json:"pressure,omitempty"`
	// Home is this home's id and directory: what another home's refusal
	// names (a slice claim, a port lease, the proxy port).
	Home *Home `json:"home,omitempty"`
	// Proxy is where this home's proxy listens; its URLs carry that port.
	Proxy *ProxyInfo `json:"proxy,omitempty"`
	// Degraded is set while the daemon's home takes no new data.
	Degraded *Degraded `json:"degraded,omitempty"`
}

// ForTable drops from r what the status table does not print (StatusArgs'
// Table): the home, and of each world its path, plan, leftovers, cost,
// suspension cause and verify checks, and of each service its kind, named
// ports, adapter and restart count. What stays is printed as before.
func (r *StatusResult) ForTable() {
	r.Home = nil
	forTable(r.Worlds)
	forTable(r.Remote)
}

// forTable drops from each world what the status table does not print.
func forTable(worlds []World) {
	for i := range worlds {
		w := &worlds[i]
		w.Path, w.Plan, w.Left, w.Cost, w.Noop, w.Suspended = "", nil, nil, nil, false, ""
		if w.Verify != nil {
			v := *w.Verify
			v.Checks, v.Duration, v.BrowserErrors = nil, 0, nil
			w.Verify = &v
		}
		for j := range w.Services {
			s := &w.Services[j]
			s.Kind, s.Ports, s.Adapter, s.Restarts = "", nil, "", 0
		}
	}
}

// Degraded says the daemon runs degraded: its home takes no new data (a
// full disk, a spent quota, a read-only file system). It supervises and
// re-adopts the running worlds, and refuses every verb that would write
// with Reason (docs/troubleshooting.md).
type Degraded struct {
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
}

// Home identifies a BINKY_HOME.
type Home struct {
	ID  string `json:"id"`
	Dir string `json:"dir"`
}

// ProxyInfo says where a home's proxy listens, and why not on its usual
// port when it does not (another home's proxy holds it).
type ProxyInfo struct {
	Port int    `json:"port"`
	URL  string `json:"url"`
	Note string `json:"note,omitempty"`
}
