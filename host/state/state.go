package state

// World is where a world is in its life: the state the registry records
// for a worktree (worktrees.state), or one status reports about it.
type World string

// World states. "Recorded" ones are stored in the registry; "reported"
// ones are only ever shown (Recorded says which is which).
const (
	// WorldDown: nothing of the world runs; its worktree, port block and
	// slices are kept. Recorded by down once its processes are stopped, for
	// a world the registry meets for the first time, and (with a Reason)
	// for a world an earlier daemon left waiting in the admission queue.
	// When its project sets wake = true, a request to one of its URLs
	// starts it again (host/daemon/wake.go).
	WorldDown World = "down"
	// WorldStarting: up (or a request's wake) is bringing the world up.
	// Recorded before anything else can fail, so a daemon that dies
	// meanwhile finds it at start and records it failed.
	WorldStarting World = "starting"
	// WorldUp: every service was started and passed its health check.
	// Recorded by up at its end, by resume, and by a reset that repaired
	// a degraded world. Status reports an up world some of whose services
	// gave up as degraded or failed instead (host/daemon/status.go).
	WorldUp World = "up"
	// WorldStopping: down is stopping the world's processes. Recorded
	// before the first is stopped; down records WorldDown after the last.
	WorldStopping World = "stopping"
	// WorldFailed: the world did not come up. Recorded, with a Reason, by
	// an up that failed, by a wake-start that failed, and by a daemon that
	// finds a world left starting; reported by status for an up world none
	// of whose commands runs.
	WorldFailed World = "failed"
	// WorldRemoving: remove's intent, recorded before it destroys
	// anything; running remove again finishes it.
	WorldRemoving World = "removing"
	// WorldDegraded: the world runs, but part of it is not what it should
	// be; Reason says what. Recorded by a reset cut short (a slice dropped
	// and not yet made again, host/world/reset.go) and, at daemon start,
	// for an up world one of whose slices was being made when the last
	// daemon died (host/world/leftovers.go); a later up or a whole reset
	// records WorldUp again. Also reported, never recorded, by status for
	// an up world some of whose services gave up while others run. Not
	// the daemon's degraded mode (a home that takes no new data,
	// host/daemon/degraded.go), which status reports in its own field.
	WorldDegraded World = "degraded"
	// WorldSuspended: admission stopped the world's processes (SIGSTOP)
	// under RAM pressure or because it sat idle (docs/admission.md).
	// Recorded by the suspend; resume, up or a request to one of its URLs
	// records WorldUp again.
	WorldSuspended World = "suspended"
	// WorldQueued: the world's up waits in the admission queue. Reported
	// by status only (the queue is admission's, not the registry's).
	WorldQueued World = "queued"
	// WorldAbsent: no world by that name exists yet. Reported by
	// up --dry-run only: up would create all of it.
	WorldAbsent World = "absent"
)

// Worlds is every world state, in the order above.
func Worlds() []World {
	return []World{WorldDown, WorldStarting, WorldUp, WorldStopping, WorldFailed,
		WorldRemoving, WorldDegraded, WorldSuspended, WorldQueued, WorldAbsent}
}

// Valid reports whether w is one of the world states.
func (w World) Valid() bool {
	switch w {
	case WorldDown, WorldStarting, WorldUp, WorldStopping, WorldFailed,
		WorldRemoving, WorldDegraded, WorldSuspended, WorldQueued, WorldAbsent:
		return true
	}
	return false
}

// Recorded reports whether the registry may store w: every world state
// but the ones only status or a dry run reports (queued, absent).
func (w World) Recorded() bool {
	return w.Valid() && w != WorldQueued && w != WorldAbsent
}

// Serving reports whether the world is meant to run and answer at its
// URLs: up, or degraded (up with a part missing). Such a world's dead
// services are restarted when the daemon adopts it, and status checks its
// services to tell up from degraded or failed.
func (w World) Serving() bool {
	return w == WorldUp || w == WorldDegraded
}

// Service is where one service of a world is in its life: the state the
// supervisor reports for a command, or the one the registry records for a
// command or an adapter's slice (services.state).
type Service string

// Service states. A command moves through the first nine, as the
// supervisor sees it (host/supervisor); the world's Store records each
// exit's state, up records starting, down stopped. An adapter's slice is
// provisioning, then provisioned, or failed. Health is not a state of its
// own: a command whose probe passes (or that has none) is running, one
// whose probe gave up is unhealthy, and the probe's words are the
// supervisor's Status.Reason.
const (
	// ServiceStarting: the process was spawned and its health probe has
	// not passed yet. Recorded by up before it spawns the process.
	ServiceStarting Service = "starting"
	// ServiceRunning: the process runs and its probe passed (or it has
	// none).
	ServiceRunning Service = "running"
	// ServiceUnhealthy: the process runs, but its probe failed
	// UnhealthyAfter times in a row; Status.Reason says which and since
	// when.
	ServiceUnhealthy Service = "unhealthy"
	// ServiceBackoff: the process exited and the restart policy starts it
	// again after a delay.
	ServiceBackoff Service = "backoff"
	// ServiceStopping: Binky is signalling the process group to stop.
	ServiceStopping Service = "stopping"
	// ServiceStopped: Binky stopped it (down, a restart, a reset's
	// dependents).
	ServiceStopped Service = "stopped"
	// ServiceExited: it ended cleanly and the policy does not restart it.
	ServiceExited Service = "exited"
	// ServiceFailed: a command ended badly and will not be restarted (the
	// policy gave up, or never restarts); a slice whose making failed
	// ("provisioning failed: …" in its last error), which up makes again.
	ServiceFailed Service = "failed"
	// ServiceLost: the recorded pid belongs to another process now (found
	// when a daemon adopts its worlds); nothing was signalled.
	ServiceLost Service = "lost"
	// ServiceProvisioning: a slice whose making began and has not
	// finished (its migrate failed, say); it exists or may exist on the
	// server, so remove destroys it, and up builds it again.
	ServiceProvisioning Service = "provisioning"
	// ServiceProvisioned: a slice made whole (created, cloned or kept).
	ServiceProvisioned Service = "provisioned"
)

// Services is every service state, in the order above.
func Services() []Service {
	return []Service{ServiceStarting, ServiceRunning, ServiceUnhealthy, ServiceBackoff,
		ServiceStopping, ServiceStopped, ServiceExited, ServiceFailed, ServiceLost,
		ServiceProvisioning, ServiceProvisioned}
}

// Valid reports whether s is one of the service states. The registry
// stores every one of them.
func (s Service) Valid() bool {
	switch s {
	case ServiceStarting, ServiceRunning, ServiceUnhealthy, ServiceBackoff,
		ServiceStopping, ServiceStopped, ServiceExited, ServiceFailed, ServiceLost,
		ServiceProvisioning, ServiceProvisioned:
		return true
	}
	return false
}

// Live reports whether the supervisor keeps a process of the command
// going: starting, running, unhealthy, or in backoff before its next
// start. Up counts such a command as running already; a reset stops such
// dependents of the slices it drops.
func (s Service) Live() bool {
	switch s {
	case ServiceStarting, ServiceRunning, ServiceUnhealthy, ServiceBackoff:
		return true
	}
	return false
}

// Ended reports whether the command has no process and none is coming:
// stopped, exited, failed or lost. Entering one clears the registry's
// recorded pid; in an up world, status counts it as given up.
func (s Service) Ended() bool {
	switch s {
	case ServiceStopped, ServiceExited, ServiceFailed, ServiceLost:
		return true
	}
	return false
}

// Running reports whether the command's process runs and nothing says it
// is wrong: running, or starting (its probe has not passed yet). Status
// drops an older run's error for it; up with nothing to change leaves it
// alone.
func (s Service) Running() bool {
	return s == ServiceRunning || s == ServiceStarting
}
