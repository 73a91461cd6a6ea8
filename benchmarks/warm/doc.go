// Command warm measures what [worktree] copy saves and costs: the time of
// `binky up <branch>` for a fresh worktree of a project whose main worktree
// holds an ignored cache (200 MB by default), three ways: no copy (the
// worktree starts cold), copy by bytes (a filesystem that cannot clone,
// --byte-dir, by default the system temp directory), and copy by reflink
// (the XFS scripts/testenv mounts, --reflink-dir). It prints the times of
// each up and their median per arm.
//
// It drives binky through its CLI. See benchmarks/README.md.
package main
