package supervisor

import (
	"time"

	"github.com/binkyhq/binky/host/state"
)

// Event names passed to Options.OnEvent.
const (
	EventStarted     = "service_started"
	EventHealthy     = "service_healthy"
	EventUnhealthy   = "service_unhealthy"
	EventExited      = "service_exited"
	EventRestarting  = "service_restarting"
	EventFailed      = "service_failed"
	EventAdopted     = "service_adopted"
	EventLost        = "service_lost"
	EventStopped     = "service_stopped"
	EventWatch       = "watch_restart"
	EventWatchFailed = "watch_failed"
)

// Event tells the caller something happened to a service. Fields that do not
// apply to an event are zero.
type Event struct {
	Name     string
	Key      Key
	Pid      int
	ExitCode int           // service_exited, service_failed; -1 when unknown or killed by a signal
	Error    string        // the exit, the probe failure, the reason
	LogTail  []string      // service_failed, service_unhealthy: the last lines of the log
	Attempt  int           // service_restarting: which consecutive restart this is
	Delay    time.Duration // service_restarting: the backoff before it
	Path     string        // watch_restart: the changed file, relative to the watch root
}

// Record is what the daemon keeps about a running process so that a later
// daemon can adopt it.
type Record struct {
	Key       Key
	Spec      Spec
	Pid       int
	Pgid      int
	StartTime uint64 // /proc/<pid>/stat field 22 on Linux, the creation time (100 ns since 1601) on Windows; 0 where unknown
	// NoRestart adopts a live process but never restarts a dead one: its
	// world is not meant to be up (down, failed, being removed).
	NoRestart bool
}

// Exit describes how a process ended and what the service does next.
type Exit struct {
	Pid    int           // 0 when the process never started
	Code   int           // exit code; -1 when killed by a signal or unknown
	Signal string        // the signal that killed it, if one did
	Err    string        // human text: "exit status 1", "signal: killed", "exited while the daemon was down"…
	State  state.Service // the service's state after this exit
	RanFor time.Duration // how long the process ran, as far as we know
	At     time.Time
}

func (e Exit) clean() bool { return e.Code == 0 && e.Signal == "" && e.Pid != 0 }

// Store persists what the supervisor learns; the daemon implements it over
// its registry. Errors are logged, never fatal to supervision.
type Store interface {
	ProcessStarted(rec Record) error
	ProcessExited(key Key, exit Exit) error
}

// Status is a service's state as State reports it.
type Status struct {
	Key       Key
	State     state.Service
	Reason    string // why: "unhealthy: <probe>: <failure> for 40s"; "" when nothing is wrong
	Pid       int    // 0 when no process runs
	Port      int    // the $PORT its process was started with; 0 when no process runs or it has none
	Pgid      int
	StartTime uint64
	Restarts  int   // restarts (by policy or watch) since the last Start
	LastExit  *Exit // nil until a process of this service has ended
	Since     time.Time
}

// AdoptResult says what Adopt did with one Record.
type AdoptResult struct {
	Key     Key
	Outcome string // one of the Adopt* constants
	Pid     int    // the process supervised now (the new one when restarted); 0 if none
	Err     error
}

// Adopt outcomes.
const (
	AdoptAdopted   = "adopted"   // still running with the recorded start time; supervised again
	AdoptRestarted = "restarted" // died while the daemon was down; the policy restarted it
	AdoptExited    = "exited"    // died while the daemon was down; the policy leaves it down
	AdoptLost      = "lost"      // the pid belongs to another process now; nothing signalled
	AdoptFailed    = "failed"    // the record was unusable or the restart failed; see Err
	AdoptSkipped   = "skipped"   // this supervisor already runs that service
)
