// Package plan computes, without processes or servers, what `binky up`
// does to a world: which services to start, restart (their rendered spec
// or ports changed, setup ran again, or something they depend on
// changes), stop (removed from binky.toml) or only record anew (a URL
// that became https); whether the port block grows or moves and setup
// runs again; which slices to provision, reconfigure (the adapter's config
// changed), migrate again (the migrate command or its inputs changed),
// verify, keep or prune; and what is stale but left to another verb (a
// slice cloned from a template whose golden key has changed since: reset).
//
// A Plan is a value: printed by `up --dry-run`, carried out step by step
// by host/world (observe → plan → apply: apply does what the plan says and
// nothing else), and tested as a table of config-before and config-after
// (plan_test.go).
//
// The Plan type itself is host/api's (api.Plan, api.PlanStep), since up
// and status carry it on the wire: plan depends on api, never the other
// way (host/fence_test.go keeps api free of host/world).
package plan
