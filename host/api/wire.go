package api

import (
	"encoding/json"
	"time"

	"github.com/binkyhq/binky/host/state"
)

// Ops the daemon serves.
const (
	OpPing    = "ping"
	OpUp      = "up"
	OpDown    = "down"
	OpRemove  = "remove"
	OpStatus  = "status"
	OpEnv     = "env"
	OpVerify  = "verify"
	OpReset   = "reset"
	OpRestart = "restart"
	OpStop    = "stop"
	OpGolden  = "golden"
	OpReserve = "reserve"
	OpRun     = "run"
	// OpStopService and OpStartService stop and start named services of a
	// world (ServicesArgs); a stopped one stays stopped across up.
	OpStopService  = "stop_service"
	OpStartService = "start_service"
	// OpAttach has the local daemon reach a host's worlds from here
	// (AttachArgs): it reads them now and holds their forwards and proxy
	// routes (host/tunnel; docs/remote.md).
	OpAttach = "attach"
)

// Request is the first and only line a client sends.
type Request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Frame is one line the daemon sends back.
type Frame struct {
	Progress *Progress       `json:"progress,omitempty"`
	Output   *Output         `json:"output,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    *Error          `json:"error,omitempty"`
	// Attach says the command of a run that asked for stdin has started:
	// from now on the caller may send Input lines (docs/architecture.md
	// "The wire").
	Attach *Attach `json:"attach,omitempty"`
}

// Attach is sent once, when a run with Stdin or TTY starts its command.
type Attach struct {
	TTY bool `json:"tty,omitempty"`
}

// Input is one line a caller sends after its request, once it got Attach:
// bytes for the command's stdin, the end of it, or the terminal's new size.
// Before Attach, and for ops that asked for no input, the daemon reads
// and drops what the caller sends (it only watches for a hang-up).
type Input struct {
	Data []byte   `json:"data,omitempty"` // base64 on the wire
	EOF  bool     `json:"eof,omitempty"`  // stdin ended (a pipe); a terminal sends ^D instead
	Size *Winsize `json:"size,omitempty"`
}

// Winsize is a terminal's size.
type Winsize struct {
	Rows uint16 `json:"rows"`
	Cols uint16 `json:"cols"`
}

// Progress reports a step of a long operation.
type Progress struct {
	Step     string `json:"step"`
	Service  string `json:"service,omitempty"`
	Message  string `json:"message,omitempty"`
	Elapsed  int64  `json:"elapsed_ms"`
	Worktree string `json:"worktree,omitempty"`
}

// ElapsedDuration is Elapsed as a time.Duration.
func (p Progress) ElapsedDuration() time.Duration { return time.Duration(p.Elapsed) * time.Millisecond }

// Output is a chunk of a command's output streamed to the caller (verify).
type Output struct {
	Check  int    `json:"check"`
	Stream string `json:"stream"`
	Data   string `json:"data"`
	// Offset is, for a binky run whose output goes to its journal, the
	// byte offset in that stream's file after this chunk: a caller that
	// follows the run again after a daemon restart resumes from there.
	Offset int64 `json:"offset,omitempty"`
}

// Error is a failed call. Code is a short machine-readable class.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Detail optionally carries a structured result of a failed op (the
	// verify run whose checks failed).
	Detail json.RawMessage `json:"detail,omitempty"`
	// cause is the error this one was made from (Errorf's %w, Wrap), for
	// errors.Is and errors.As in the daemon's process. It is unexported,
	// so it never reaches the wire: a client sees Code and Message.
	cause error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the error's cause; nil for one decoded from the wire.
func (e *Error) Unwrap() error { return e.cause }

// Error codes.
const (
	CodeInvalid  = "invalid"   // bad arguments or config
	CodeNotFound = "not_found" // unknown worktree
	CodeConflict = "conflict"  // refused (dirty worktree, busy)
	CodeFailed   = "failed"    // the operation ran and failed (health, verify)
	CodeInternal = "internal"
)

// WorldRef names one world: a worktree name or a branch, optionally with the
// directory the caller stands in to tell projects apart, and the caller's
// environment.
//
// An empty Name means the worktree Dir is in (as `binky up` with no
// branch). Project, when set, keeps only that project's worlds, for a
// worktree name two projects share.
type WorldRef struct {
	Name    string `json:"name,omitempty"`
	Dir     string `json:"dir,omitempty"`
	Project string `json:"project,omitempty"`
	// Env is the caller's whole environment (os.Environ as a map), for
	// verbs that render tokens or call adapters: ${env.NAME} resolves from
	// it first, and the commands a verb runs (migrate, seed, verify) start
	// from it. The daemon's own environment is never used.
	Env map[string]string `json:"env,omitempty"`
}

// UpArgs brings a world up.
type UpArgs struct {
	Dir    string `json:"dir"`              // where the caller stands (a repository or one of its worktrees)
	Branch string `json:"branch,omitempty"` // empty: the worktree Dir is in
	// Env is the caller's whole environment (os.Environ as a map): the base
	// of the environment of every service, migrate, seed and health probe
	// this up starts, and where ${env.NAME} resolves first. The daemon's own
	// environment is never used.
	Env map[string]string `json:"env,omitempty"`
	// NoWait refuses at once, with the reason, instead of waiting in the
	// admission queue.
	NoWait bool `json:"no_wait,omitempty"`
	// DryRun computes the plan for an existing world (what up would start,
	// restart, stop, provision and keep) and changes nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Prune destroys the slices of adapter services removed from
	// binky.toml, instead of keeping them until remove.
	Prune bool `json:"prune,omitempty"`
	// The selection of services the world runs, at most one of them:
	// Profile names a [profiles.<name>] of binky.toml, Only the services
	// to run, Except the ones to leave out (what they need runs too).
	// None keeps the world's recorded selection; All goes back to every
	// service.
	Profile string   `json:"profile,omitempty"`
	Only    []string `json:"only,omitempty"`
	Except  []string `json:"except,omitempty"`
	All     bool     `json:"all,omitempty"`
	// NewBranch makes Branch a new branch even when it is the name of an
	// existing world (which it otherwise means: up feat-c is up feat/c).
	NewBranch bool `json:"new_branch,omitempty"`
}

// DownArgs stops a world's processes.
type DownArgs struct {
	WorldRef
}

// RemoveArgs destroys a world.
type RemoveArgs struct {
	WorldRef
	Force bool `json:"force,omitempty"`
	// RemoveWorktree removes the worktree too when binky did not make it
	// (Claude Code, worktrunk or a plain git worktree add did); one binky
	// made goes with its world either way.
	RemoveWorktree bool `json:"remove_worktree,omitempty"`
	// KeepWorktree leaves the worktree even when binky made it: the
	// caller is a tool's pre-remove hook, and the tool removes it.
	KeepWorktree bool `json:"keep_worktree,omitempty"`
}

// EnvArgs asks for a world's exposed coordinates.
type EnvArgs struct {
	WorldRef
}

// ResetArgs puts a world's slice back to the golden state.
type ResetArgs struct {
	WorldRef
	Service string `json:"service,omitempty"`
	// NoRestart leaves the services that depend on the reset slices
	// running through the reset (by default they are stopped before the
	// slice is dropped and started again, and waited for, after).
	NoRestart bool `json:"no_restart,omitempty"`
}

// RestartArgs restarts a world's cmd services.
type RestartArgs struct {
	WorldRef
	// Services to restart; empty: every cmd service of the world.
	Services []string `json:"services,omitempty"`
}

// ServicesArgs names services of a world (binky stop, binky start).
type ServicesArgs struct {
	WorldRef
	Services []string `json:"services,omitempty"`
}

// RunArgs runs one command in a world's environment (as verify does),
// through the jobs queue (docs/admission.md). Exactly one of Argv (run as
// is, no shell) and Command (run by the shell) is set.
type RunArgs struct {
	WorldRef
	Argv    []string `json:"argv,omitempty"`
	Command string   `json:"command,omitempty"`
	// Stdin attaches the caller's stdin: the daemon sends Attach when the
	// command starts, and the caller sends Input lines (binky run -i).
	Stdin bool `json:"stdin,omitempty"`
	// TTY runs the command on a terminal (a pty) of this size, its stdin,
	// stdout and stderr all on it; output comes as stdout (binky run -t).
	TTY *Winsize `json:"tty,omitempty"`
	// Resume follows the journaled run of this id again (after the daemon
	// that ran it went away) instead of starting a command: its output
	// from Offsets (stdout, stderr), then its result, or why it never
	// started. The other fields are ignored.
	Resume  string   `json:"resume,omitempty"`
	Offsets [2]int64 `json:"offsets,omitzero"`
}

// ProgressRunID is the progress step that gives a binky run's journal id
// (its Message), before it queues: the id RunArgs.Resume takes.
const ProgressRunID = "run"

// RunResult is how a run ended.
type RunResult struct {
	Project    string `json:"project"`
	Worktree   string `json:"worktree"`
	ExitCode   int    `json:"exit_code"` // -1: it could not run, or was killed
	DurationMS int64  `json:"duration_ms"`
	// WaitedMS is how long it waited in the jobs queue.
	WaitedMS int64 `json:"waited_ms"`
}

// VerifyArgs runs a world's verify commands.
type VerifyArgs struct {
	WorldRef
}

// StatusArgs filters status; empty means every world on the machine.
type StatusArgs struct {
	WorldRef
	// Here asks for the one world of the worktree Dir is in when Name is
	// empty (binky logs with no worktree).
	Here bool `json:"here,omitempty"`
	// Table asks for what the status table of `binky status` prints and
	// no more (StatusResult.ForTable): no cost figures, no home, and of
	// each world and service only the fields the table shows. A reply a
	// tenth the size is quicker to send and, above all, to decode.
	Table bool `json:"table,omitempty"`
}

// Golden actions.
const (
	GoldenList    = "list"
	GoldenRebuild = "rebuild"
	GoldenDrop    = "drop"
)

// GoldenArgs lists, rebuilds or drops golden templates. Rebuild and drop
// act on Template (its name, or its key's 8-digit short form) or on every
// template of Project.
type GoldenArgs struct {
	Action   string `json:"action"`
	Template string `json:"template,omitempty"`
	Project  string `json:"project,omitempty"`
	// Dir is where the caller stands: its binky.toml tells drop how to
	// reach the template's server.
	Dir string            `json:"dir,omitempty"`
	Env map[string]string `json:"env,omitempty"` // as UpArgs.Env
}

// GoldenResult lists templates: all of them for list, the ones acted on
// for rebuild and drop.
type GoldenResult struct {
	Templates []GoldenTemplate `json:"templates"`
}

// GoldenTemplate is one golden template.
type GoldenTemplate struct {
	Project   string `json:"project"`
	Service   string `json:"service,omitempty"`
	CloneFrom string `json:"clone_from"`
	Adapter   string `json:"adapter"`
	Server    string `json:"server,omitempty"`
	Name      string `json:"name"`
	// Key is the 8-digit short form of the key; "" for a template left by
	// an older binky, whose key is unknown.
	Key string `json:"key"`
	// Size in bytes, -1 when the adapter's storage cannot tell.
	Size     int64     `json:"size"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	// Worlds are the existing worlds cloned from it.
	Worlds []string `json:"worlds,omitempty"`
	Legacy bool     `json:"legacy,omitempty"`
	// State is "" for a template ready to clone, "building" for one whose
	// build has not finished (or was cut short), "broken" for one a failed
	// build or clone left on the server.
	State string `json:"state,omitempty"`
	// Error is why dropping this template failed (drop and rebuild of
	// several report each one's result).
	Error string `json:"error,omitempty"`
	// Method is how the adapter said the latest clone of it was made;
	// CopyOnWrite reads it: "copy-on-write" (its worlds share its blocks),
	// "copied", "unverified" (asked for, not seen), "" (never cloned).
	Method      string `json:"method,omitempty"`
	CopyOnWrite string `json:"copy_on_write,omitempty"`
}

// AttachArgs names the host (of hosts.toml) whose worlds the local
// daemon reaches.
type AttachArgs struct {
	Host string `json:"host"`
}

// AttachResult is what the local daemon holds for a host: whether the
// road is up, the host's worlds it reaches, each forward (the host's
// loopback port, as a decimal string, → the local port) and the local
// proxy's ports (http, and https when it serves it), with which a coordinate of the host is made one that
// answers here.
type AttachResult struct {
	Host      string         `json:"host"`
	Up        bool           `json:"up"`
	Error     string         `json:"error,omitempty"`
	Worlds    []World        `json:"worlds,omitempty"`
	Forwards  map[string]int `json:"forwards,omitempty"`
	ProxyPort int            `json:"proxy_port,omitempty"`
	TLSPort   int            `json:"proxy_tls_port,omitempty"`
}

// EnvResult is the expose set: service name → coordinate.
type EnvResult struct {
	Project  string            `json:"project"`
	Worktree string            `json:"worktree"`
	Env      map[string]string `json:"env"`
	Order    []string          `json:"order"`
	// Direct is, for each exposed service that listens on a port of the
	// world's block, http://127.0.0.1:<port>: the same service without the
	// proxy and without resolving a *.localhost name, for clients whose
	// resolver does not map *.localhost to loopback (Go's, on most Linux
	// machines). Adapter services have none: their address is direct.
	Direct map[string]string `json:"direct,omitempty"`
	// State is the world's state; env of a world that is not up still
	// answers (its coordinates are fixed), and the CLI warns.
	State state.World `json:"state,omitempty"`
	// NotRunning names each exposed service of an up world that does not
	// run, with why ("not in profile frontend", "stopped"): it is left
	// out of Env and Direct instead of giving an address nothing answers.
	NotRunning map[string]string `json:"not_running,omitempty"`
	// Waiting names each exposed wake service (wake = true) of an up
	// world that does not run yet, with why ("starts on its first
	// request"): its proxied URL stays in Env (a request to it starts it),
	// and it has no Direct address until then.
	Waiting map[string]string `json:"waiting,omitempty"`
	// StableName is the name of [project] stable_names the world holds,
	// in place of its worktree name in its hostnames; "" when none.
	StableName string `json:"stable_name,omitempty"`
}

// PingResult identifies the daemon.
type PingResult struct {
	Pid       int       `json:"pid"`
	Version   string    `json:"version"`
	Home      string    `json:"home"`
	ProxyPort int       `json:"proxy_port,omitempty"`
	TLSPort   int       `json:"proxy_tls_port,omitempty"`
	Started   time.Time `json:"started"`
}

// EnvVars names each exposed coordinate BINKY_<SERVICE>_URL (the service
// name upper-cased, anything outside [A-Z0-9] as _), and each direct
// address BINKY_<SERVICE>_DIRECT_URL: the variables verify commands see
// and `env --dotenv` prints.
func EnvVars(r EnvResult) map[string]string {
	out := map[string]string{}
	for name, v := range r.Env {
		out["BINKY_"+envName(name)+"_URL"] = v
	}
	for name, v := range r.Direct {
		if _, ok := r.Env[name]; ok {
			out["BINKY_"+envName(name)+"_DIRECT_URL"] = v
		}
	}
	if r.StableName != "" {
		out["BINKY_STABLE_NAME"] = r.StableName
	}
	return out
}

func envName(svc string) string {
	b := []byte(svc)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}
