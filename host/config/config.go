package config

import (
	"slices"
	"time"
)

// Defaults filled in by Parse.
const (
	DefaultRestart        = RestartOnFailure
	DefaultStopTimeout    = 10 * time.Second
	DefaultHealthTimeout  = 60 * time.Second
	DefaultHealthInterval = 500 * time.Millisecond
	// DefaultGoldenKeep is how many golden templates per clone_from a
	// project keeps when [project] golden_keep is not set.
	DefaultGoldenKeep = 3
)

// Restart policies.
const (
	RestartOnFailure = "on-failure"
	RestartAlways    = "always"
	RestartNever     = "never"
)

// Config is a decoded binky.toml.
type Config struct {
	// File is the path the config was loaded from (the name given to Parse).
	File    string
	Project Project
	// Services by name; Order lists the names in file order.
	Services map[string]*Service
	Order    []string
	Agents   Agents
	// Worktree is the [worktree] table (docs/warm.md).
	Worktree Worktree
	// Profiles are the [profiles.<name>] tables: the services each
	// names (binky up --profile <name> runs them and what they need).
	Profiles map[string][]string

	pos posIndex
}

// Project is the [project] table.
type Project struct {
	Name  string
	HTTPS bool
	// PortRange is [lo, hi], both inclusive; zero when unset.
	PortRange   [2]int
	EnvFile     string
	WorktreeDir string
	// GoldenKeep is how many golden templates per clone_from to keep (the
	// least recently used beyond it are dropped); DefaultGoldenKeep when
	// unset, never below 1.
	GoldenKeep int
	// Admission (docs/admission.md). MaxParallel, RAMReserve and
	// DiskHeadroom can only tighten the machine's bounds for this project;
	// zero means "the machine's".
	MaxParallel  int
	RAMReserve   float64 // percent of RAM kept free
	DiskHeadroom float64 // GB of disk kept free
	// Jobs bounds how many `binky run` commands (and verify checks) of
	// this project run at once ([admission] jobs); zero means the
	// machine's default (its cores).
	Jobs int
	// Connections bounds the connections binky's jobs (binky run, verify
	// checks) of every project hold together on each server this
	// project's slices live on, as this project's jobs are admitted
	// ([admission] connections); zero: no bound. JobConnections is what
	// one job of this project is counted for on each of those servers
	// ([admission] job_connections); zero means DefaultJobConnections.
	Connections    int
	JobConnections int
	// Wake starts a down world when the proxy gets a request for it.
	Wake bool
	// IdleSuspend suspends a world after this long with no proxied request
	// and no CPU; zero never.
	IdleSuspend time.Duration
	// Secrets names ${env.NAME} variables whose values are secrets although
	// their names do not say so (see SecretEnv).
	Secrets []string
	// Hostname is the template of every url service's name before the
	// apex (names.HostFrom); "" is names.DefaultHostTemplate.
	Hostname string
	// Apex is the zone the names live under; "" is localhost.
	Apex string
	// StableNames is the set a new world is handed the first free name of;
	// it takes the worktree's place in the world's hostnames.
	StableNames []string
}

// Service is one [services.<name>] table: a cmd service (a process binky
// supervises) or an adapter service (a slice binky asks a server to carve).
type Service struct {
	Name string
	// Exactly one of Cmd and Adapter is set.
	Cmd, Adapter string
	DependsOn    []string
	// Env applies to the process of a cmd service, and to migrate and seed
	// of an adapter service.
	Env map[string]string

	// cmd services only.
	Cwd     string
	EnvFile string
	Ports   []string
	URL     string
	// Host overrides the project's hostname template for this service.
	Host   string
	Health *Health
	// Restart is on-failure (the default), always or never.
	Restart    string
	Watch      []string
	StopSignal string
	// StopTimeout defaults to 10s.
	StopTimeout time.Duration
	// Wake leaves the service stopped at up; the proxy starts it (and what
	// it depends on) on its first request. Only a service with a url.
	Wake bool
	// IdleSuspend stops a woken service again after this long with no
	// proxied request (0: never); it wakes again on the next one.
	IdleSuspend time.Duration

	// adapter services only.
	AdminURL, Migrate, Seed, CloneFrom string
	// Inputs are globs, relative to the worktree root, of the files migrate
	// and seed read ("db/migrations/**"): their content joins the golden
	// template's key, so each branch clones a template of its own schema.
	Inputs []string
	// Timeout bounds each adapter call; zero means the caller's default.
	Timeout time.Duration
	// Config is passed to the adapter verbatim.
	Config map[string]any
}

// Health is a service's readiness probe: exactly one of HTTP, TCP, Exec.
type Health struct {
	HTTP, TCP, Exec string
	// Timeout (default 60s) bounds the wait for health; Interval (default
	// 500ms) is the pause between probes.
	Timeout, Interval time.Duration
}

// Agents is the [agents] table.
type Agents struct {
	// Expose lists service names whose coordinates binky env prints.
	Expose []string
	// Verify lists commands binky verify runs in the worktree.
	Verify []string
	// BrowserLogs has the proxy put the browser log script into the
	// pages of the url services (docs/agents.md, "Browser logs").
	BrowserLogs bool
}

// Keep is how many golden templates per clone_from the project keeps:
// GoldenKeep, or DefaultGoldenKeep when unset.
func (p *Project) Keep() int {
	if p.GoldenKeep < 1 {
		return DefaultGoldenKeep
	}
	return p.GoldenKeep
}

// IsAdapter reports whether s is an adapter service.
func (s *Service) IsAdapter() bool { return s.Adapter != "" }

// PortNames returns the ports s asks for: its ports list, or ["http"] when
// it sets only url, or nil when it asks for none. The first one is
// ${self.port} and $PORT.
func (s *Service) PortNames() []string {
	if s.IsAdapter() {
		return nil
	}
	if len(s.Ports) > 0 {
		return slices.Clone(s.Ports)
	}
	if s.URL != "" {
		return []string{"http"}
	}
	return nil
}

// StartOrder groups the services into depends_on levels, each in file
// order: every service of a level may start in parallel once all services
// of the previous levels are healthy. Should the config hold a cycle (Parse
// reports it as an error), the services on it come last, in one level.
func (c *Config) StartOrder() [][]string {
	level := map[string]int{}
	done := 0
	var levels [][]string
	for done < len(c.Order) {
		var cur []string
		for _, name := range c.Order {
			if _, ok := level[name]; ok {
				continue
			}
			ready := true
			for _, d := range c.Services[name].DependsOn {
				l, ok := level[d]
				_, exists := c.Services[d]
				if exists && (!ok || l == len(levels)) {
					ready = false
					break
				}
			}
			if ready {
				cur = append(cur, name)
			}
		}
		if len(cur) == 0 {
			for _, name := range c.Order {
				if _, ok := level[name]; !ok {
					cur = append(cur, name)
				}
			}
		}
		for _, name := range cur {
			level[name] = len(levels)
		}
		done += len(cur)
		levels = append(levels, cur)
	}
	return levels
}

// Line returns the line a key is written on, e.g. Line("services", "api",
// "cmd"), or of its nearest enclosing key; 0 when c was not parsed from a
// file.
func (c *Config) Line(key ...string) int {
	if c.pos == nil {
		return 0
	}
	return c.pos.lookup(key...).line
}
