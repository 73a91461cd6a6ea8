package supervisor

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/binkyhq/binky/host/health"
)

// MarkerEnv is set in every service's environment to
// "<home id>/<project>/<worktree>/<service>" (Key.Marker), which is how Stop
// finds a descendant that escaped the process group. The home id keeps two
// homes that run a project of the same name from ever matching each
// other's processes.
const MarkerEnv = "BINKY_SERVICE"

// DefaultStopTimeout is how long Stop waits after the stop signal before it
// kills the group.
const DefaultStopTimeout = 10 * time.Second

// Key names one service of one world of one home.
type Key struct {
	// Home is the id of the BINKY_HOME the world belongs to
	// (registry.HomeID); it is part of the process marker.
	Home                       string
	Project, Worktree, Service string
}

// String renders the key as project/worktree/service.
func (k Key) String() string { return k.Project + "/" + k.Worktree + "/" + k.Service }

// Marker is the value of MarkerEnv in the key's processes:
// WorldMarker(home, project, worktree) + service.
func (k Key) Marker() string { return WorldMarker(k.Home, k.Project, k.Worktree) + k.Service }

// Restart is a service's restart policy.
type Restart string

// The restart policies.
const (
	RestartOnFailure Restart = "on-failure" // restart after a non-zero exit or a signal
	RestartAlways    Restart = "always"     // restart after any exit
	RestartNever     Restart = "never"      // never restart
)

// ParseRestart checks a restart policy name; "" is on-failure.
func ParseRestart(s string) (Restart, error) {
	switch r := Restart(s); r {
	case "":
		return RestartOnFailure, nil
	case RestartOnFailure, RestartAlways, RestartNever:
		return r, nil
	}
	return "", fmt.Errorf("restart policy %q: want on-failure, always or never", s)
}

// Spec is everything needed to run one cmd service.
type Spec struct {
	Key     Key
	Command string   // run with sh -c (cmd /C on Windows)
	Dir     string   // working directory
	Env     []string // the complete environment, tokens rendered, PORT included
	LogPath string   // stdout and stderr are appended here by the process itself

	Restart     Restart       // "" means on-failure
	StopSignal  string        // "SIGTERM" (the default), "INT", "SIGQUIT"…
	StopTimeout time.Duration // DefaultStopTimeout if 0

	WatchRoot string   // the worktree root the Watch globs are relative to; Dir if ""
	Watch     []string // doublestar globs; a change restarts the service

	Health *health.Probe // nil: up once the process is up
}

// normalize fills defaults and checks the spec, so that the rest of the
// package can trust it.
func (s Spec) normalize() (Spec, error) {
	var errs []error
	if s.Key.Project == "" || s.Key.Worktree == "" || s.Key.Service == "" {
		errs = append(errs, fmt.Errorf("key %q has an empty part", s.Key))
	}
	if s.Command == "" {
		errs = append(errs, errors.New("command is empty"))
	}
	if s.LogPath == "" {
		errs = append(errs, errors.New("log path is empty"))
	}
	r, err := ParseRestart(string(s.Restart))
	if err != nil {
		errs = append(errs, err)
	}
	s.Restart = r
	if s.StopSignal == "" {
		s.StopSignal = "SIGTERM"
	}
	if _, err := ParseSignal(s.StopSignal); err != nil {
		errs = append(errs, err)
	}
	if s.StopTimeout <= 0 {
		s.StopTimeout = DefaultStopTimeout
	}
	if s.WatchRoot == "" {
		s.WatchRoot = s.Dir
	}
	if len(s.Watch) > 0 && s.WatchRoot == "" {
		errs = append(errs, errors.New("watch globs need a watch root (or a dir)"))
	}
	for _, g := range s.Watch {
		if !doublestar.ValidatePattern(g) || filepath.IsAbs(g) {
			errs = append(errs, fmt.Errorf("watch glob %q is not a valid relative doublestar pattern", g))
		}
	}
	if s.Health != nil {
		if err := s.Health.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return s, fmt.Errorf("service %s: %w", s.Key, err)
	}
	return s, nil
}

// env returns the spec's environment with the marker set (replacing any
// marker the caller passed).
func (s Spec) env() []string {
	env := make([]string, 0, len(s.Env)+1)
	prefix := MarkerEnv + "="
	for _, kv := range s.Env {
		if len(kv) >= len(prefix) && kv[:len(prefix)] == prefix {
			continue
		}
		env = append(env, kv)
	}
	return append(env, prefix+s.Key.Marker())
}
