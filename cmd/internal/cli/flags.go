package cli

import "time"

// The flags of the verbs binkyd runs. binky embeds them in verbs that hand
// off to binkyd (so its help and completion know them); binkyd embeds them
// in the verbs that do the work.

// Check is `binky check`'s arguments.
type Check struct {
	JSON   bool   `help:"Print the diagnostics as a JSON array (empty when clean)."`
	Target string `help:"Also check the commands for this platform's shell: windows reports what cmd.exe reads differently from sh (on Windows that is always checked)." enum:",windows" default:"" placeholder:"OS"`
	Path   string `arg:"" optional:"" help:"A binky.toml, or a directory to search up from (default: the current directory)." placeholder:"PATH"`
}

// Doctor is `binky doctor`'s flags.
type Doctor struct {
	JSON bool `help:"Print the findings as a JSON array."`
	All  bool `help:"Also print the checks that passed or were skipped."`
}

// Logs is `binky logs`'s arguments.
type Logs struct {
	Worktree   string `arg:"" optional:"" help:"Worktree name or branch; default: the worktree you stand in."`
	Project    string `help:"The project the worktree belongs to, when two projects have a worktree of that name." placeholder:"NAME"`
	Service    string `arg:"" optional:"" help:"One service; default: all of the world's services."`
	Follow     bool   `short:"f" help:"Keep printing new lines, across log rolls."`
	Lines      int    `short:"n" default:"-1" help:"How many past lines to print (0: all kept; default 100, or all with --since)."`
	Since      string `help:"Only lines written since then: a duration (10m, 2h) or a time (RFC 3339, 2026-12-07T12:00:00Z)." placeholder:"WHEN"`
	Timestamps bool   `short:"t" help:"Start each line with the time it was written (to the second; see docs/architecture.md)."`
	JSON       bool   `help:"Print one JSON object per line: {\"service\",\"time\",\"line\"} (redacted like the text)."`
	Browser    bool   `help:"Print what the world's pages reported in the browser instead (console.error, uncaught errors, failed fetches; [agents] browser_logs): -n counts entries."`
}

// Trust is `binky trust`'s flags.
type Trust struct {
	Uninstall bool `help:"Remove Binky's local CA from the trust stores instead."`
	// Zone makes (when missing) and trusts the CA of each zone named: the
	// apex a project sets (apex = "test").
	Zone []string `help:"Also make and trust the CA of this apex's zone (test, example, internal or home.arpa), for a project with apex = \"test\"; repeatable." placeholder:"ZONE"`
}

// Adapters is `binky adapters`'s flags.
type Adapters struct {
	JSON bool `help:"Print JSON."`
}

// AdapterTest is `binky adapter test`'s arguments.
type AdapterTest struct {
	Name     string        `arg:"" help:"Adapter name or alias (binky-adapter-<name> on PATH or in $BINKY_HOME/adapters)."`
	Config   []string      `name:"config" sep:"none" placeholder:"KEY=VALUE" help:"A config entry sent with every request (repeatable)."`
	AdminURL string        `name:"admin-url" placeholder:"URL" help:"The server to carve test slices from."`
	Project  string        `default:"conformance" help:"Project name sent in requests."`
	Timeout  time.Duration `default:"60s" help:"Deadline of each call."`
	Verbose  bool          `short:"v" help:"Show the adapter's stderr."`
}

// Mcp is `binky mcp`'s flags.
type Mcp struct {
	LogLevel string `name:"log-level" default:"warn" enum:"trace,debug,info,warn,error,off" help:"Diagnostics on stderr: trace, debug, info, warn, error or off."`
}
