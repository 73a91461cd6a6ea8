// Package plan computes, without processes or servers, what `binky up`
// does to a world that already runs: which services to start, restart
// (their rendered spec changed, or something they depend on restarts),
// stop (removed from binky.toml), which slices to provision, and which to
// keep until `binky remove` or `up --prune`. A Plan is a value: printed by
// `up --dry-run`, applied by host/world in dependency order, and tested as
// a table of config-before and config-after (plan_test.go).
//
// The Plan type itself is host/api's (api.Plan, api.PlanStep), since up
// and status carry it on the wire: plan depends on api, never the other
// way (host/fence_test.go keeps api free of host/world).
package plan
