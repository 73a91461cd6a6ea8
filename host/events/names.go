package events

// Event names. docs/events.md says what each means; a test keeps the two in
// step.
const (
	// Worktrees and the world lifecycle.
	WorktreeCreated = "worktree_created"
	WorktreeRemoved = "worktree_removed"
	UpStarted       = "up_started"
	UpDone          = "up_done"
	UpFailed        = "up_failed"
	DownStarted     = "down_started"
	DownDone        = "down_done"
	DownFailed      = "down_failed"

	// Admission (docs/admission.md).
	WorldQueued    = "world_queued"
	WorldAdmitted  = "world_admitted"
	WorldRefused   = "world_refused"
	WorldSuspended = "world_suspended"
	WorldResumed   = "world_resumed"
	WorldWoken     = "world_woken"

	// Ports.
	PortsReserved = "ports_reserved"
	PortsReleased = "ports_released"
	PortsHeld     = "ports_held"

	// Adapter slices and golden templates.
	SliceProvisioned = "slice_provisioned"
	SliceResolved    = "slice_resolved"
	SliceCloned      = "slice_cloned"
	SliceDestroyed   = "slice_destroyed"
	SliceFailed      = "slice_failed"
	SliceVanished    = "slice_vanished"
	SliceLeft        = "slice_left"
	SliceInterrupted = "slice_interrupted"
	CloneFallback    = "clone_fallback"
	GoldenBuilt      = "golden_built"
	MigrateDone      = "migrate_done"
	MigrateFailed    = "migrate_failed"
	SeedDone         = "seed_done"
	SeedFailed       = "seed_failed"
	AdapterStderr    = "adapter_stderr"

	// Supervised services.
	ServiceStarted    = "service_started"
	ServiceHealthy    = "service_healthy"
	ServiceUnhealthy  = "service_unhealthy"
	ServiceExited     = "service_exited"
	ServiceRestarting = "service_restarting"
	ServiceFailed     = "service_failed"
	ServiceAdopted    = "service_adopted"
	ServiceLost       = "service_lost"
	ServiceStopped    = "service_stopped"
	ServiceEscaped    = "service_escaped"
	WatchRestart      = "watch_restart"

	// Agents.
	VerifyDone = "verify_done"

	// The daemon.
	DaemonStarted = "daemon_started"
	DaemonStopped = "daemon_stopped"
	HookEnded     = "hook_ended"
)

// Names lists every event name, in the order docs/events.md gives them.
func Names() []string {
	return []string{
		WorktreeCreated, WorktreeRemoved, UpStarted, UpDone, UpFailed,
		DownStarted, DownDone, DownFailed,
		WorldQueued, WorldAdmitted, WorldRefused, WorldSuspended, WorldResumed, WorldWoken,
		PortsReserved, PortsReleased, PortsHeld,
		SliceProvisioned, SliceResolved, SliceCloned, SliceDestroyed, SliceFailed,
		SliceVanished, SliceLeft, SliceInterrupted,
		CloneFallback, GoldenBuilt, MigrateDone, MigrateFailed, SeedDone, SeedFailed,
		AdapterStderr,
		ServiceStarted, ServiceHealthy, ServiceUnhealthy, ServiceExited,
		ServiceRestarting, ServiceFailed, ServiceAdopted, ServiceLost,
		ServiceStopped, ServiceEscaped, WatchRestart,
		VerifyDone,
		DaemonStarted, DaemonStopped, HookEnded,
	}
}
