// Package winjob owns binky's Windows Job Objects, the containment Unix
// gets from process groups and cgroups:
//
//   - a service's named job (Name, Create, Open, Names): every process a
//     service starts is in it, so a stop terminates the job and no
//     descendant escapes, and a restarted daemon finds the world's
//     processes again by the job's name (the service's marker, which
//     holds the home id, so two homes never share a job). Service jobs
//     never kill on close: a world outlives its daemon by design.
//   - a one-shot command's unnamed job (Run): hooks, health probes,
//     setup, verify, migrate; it kills on close, so what such a command
//     started dies with it, or with the daemon.
//   - the graceful stop (CtrlBreak): CTRL_BREAK_EVENT to a service's
//     process group, sent by a short-lived copy of the running executable
//     that attaches to the service's console (a process can send console
//     events only on its own console, and each service has a hidden one of
//     its own). That copy is recognised by an environment variable in this
//     package's init, which sends the event and exits before main runs.
//
// Everything but Name, MarkerOf and Run is Windows-only; elsewhere Run is
// cmd.Run, so callers of one-shot commands need no platform file.
package winjob
