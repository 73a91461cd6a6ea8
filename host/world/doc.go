// Package world owns the lifecycle decisions of one world that can be made
// without processes or servers: today the plan `binky up` computes for a
// world that already runs — which services to start, restart (their
// rendered config changed, or something they depend on restarts), stop
// (removed from binky.toml), which slices to provision, and which to keep
// until `binky remove` or `up --prune`. The plan is a value: printed by
// `up --dry-run`, applied by the daemon in dependency order, and tested
// as a table of config-before and config-after (plan_test.go).
//
// The daemon still applies it (host/daemon/up.go); moving the apply steps
// — plan, apply, stop, remove, reset — here is the rest of issue 26.
package world
