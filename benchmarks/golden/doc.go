// Command golden measures what per-branch golden templates save: it
// alternates `binky up` between two branches whose migration files differ,
// first with one template per clone_from (golden_keep = 1: the template is
// rebuilt on every switch, as before templates were keyed by their inputs),
// then with the default golden_keep, where both branches' templates
// coexist and each up only clones. It prints the time per up of each arm.
//
// It drives binky through its CLI and the database through sqlite3 or
// psql, so it links no database driver. See benchmarks/README.md.
package main
