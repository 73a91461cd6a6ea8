// Package golden owns binky's golden templates: the slices that migrate and
// seed build once, and that each world's slice is cloned from.
//
// It decides which template a world needs (Key: the migrate and seed
// commands, the adapter, the server, and the content of the service's
// declared inputs in the worktree being brought up), what the template is
// called on the backend (Name), which templates to keep (Evict: the
// least recently used beyond golden_keep go), and what is known about each
// (Record, kept as one JSON file per template under $BINKY_HOME/golden/ so
// a daemon restart keeps it, with the method of each world's clone), and
// whether a clone method means the world shares the template's blocks
// (Sharing: copy-on-write, copied, unverified). It never calls an adapter: host/daemon wires
// it to the adapters and serializes builds, clones and drops per template.
package golden
