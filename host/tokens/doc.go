// Package tokens finds and renders the ${…} tokens of a binky.toml:
// ${self.port}, ${self.ports.<name>}, ${<svc>.port}, ${<svc>.ports.<name>},
// ${<svc>.url}, ${<svc>.host}, ${<svc>.<value>}, ${env.NAME},
// ${worktree.name}, ${worktree.path} and ${project.name}.
//
// Rendering is a pure function of a string and a coordinates map. The map's
// keys are token names without the ${}; the helpers in coords.go build them
// so every producer and consumer spells them the same way. A token that is
// not in the map, and any malformed ${ sequence, is left byte for byte as
// written, so tokens owned by other tooling survive.
//
// RenderShell (shell.go) is the rendering for strings that `sh -c` runs: a
// small lexer of POSIX quoting puts a quoted reference to an environment
// variable where each token was, and returns the variables, so a value is
// data to the shell and never code.
//
// The package imports only the standard library; package config imports it.
package tokens
