// Package remote is the road to other machines: it reads the user's
// $BINKY_HOME/hosts.toml (the hosts Binky may drive, strictly, like
// binky.toml) and builds the OpenSSH client command that reaches one, with
// connection multiplexing (one ControlMaster per host, its socket under
// BINKY_HOME). It runs the user's own ssh, with their keys, agent,
// known_hosts and ssh config: whatever `ssh box` does, Binky does.
//
// Rewrite turns a host's coordinate into the one that answers on this
// machine (its forwards, the local proxy); host/tunnel holds those.
//
// Nothing here listens: the host's daemon is reached through
// `binky system dial-stdio` run over ssh (docker's connhelper model), and the
// host runs its own admission, ports and slices.
package remote
