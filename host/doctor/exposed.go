package doctor

import (
	"context"
	"errors"
	"io/fs"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/binkyhq/binky/host/listeners"
	"github.com/binkyhq/binky/host/ports"
)

// worldBlock is one world's port block.
type worldBlock struct {
	project, worktree string
	lo, hi            int
}

// worldBlocks lists every world's port block, read-only; nil when there
// is no registry.
func worldBlocks(e *Env) ([]worldBlock, error) {
	conn, err := openRO(registryPath(e))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []worldBlock
	err = sqlitex.ExecuteTransient(conn, "SELECT project, worktree, lo, hi FROM port_blocks ORDER BY project, worktree;", &sqlitex.ExecOptions{
		ResultFunc: func(stmt *sqlite.Stmt) error {
			out = append(out, worldBlock{stmt.ColumnText(0), stmt.ColumnText(1), stmt.ColumnInt(2), stmt.ColumnInt(3)})
			return nil
		},
	})
	return out, err
}

// checkExposed warns about each port of a world's block that listens on
// an address other than loopback (0.0.0.0, ::, an interface's address):
// the world is reachable from other machines. A framework that reads
// $PORT as "listen on every interface" (Miniflux) is the usual cause.
func checkExposed(_ context.Context, e *Env) []Finding {
	socks, err := listeners.Listening(0)
	if err != nil {
		return []Finding{skip("listening sockets cannot be listed on %s", e.GOOS)}
	}
	blocks, err := worldBlocks(e)
	if err != nil {
		return []Finding{skip("the registry's port blocks cannot be read: %v", err)}
	}
	var out []Finding
	for _, b := range blocks {
		var ps []int
		for p := b.lo; p <= b.hi; p++ {
			ps = append(ps, p)
		}
		seen := map[uint16]bool{}
		for _, s := range listeners.Exposed(socks, ps...) {
			if seen[s.Addr.Port()] {
				continue
			}
			seen[s.Addr.Port()] = true
			holder := ports.Owner(int(s.Addr.Port()))
			if holder == "" {
				holder = "a process not visible to you"
			}
			out = append(out, warn(`bind the service to 127.0.0.1; if it reads $PORT as "every interface", write env = { PORT = "" } in its [services.<name>] and pass ${self.port} as its address`,
				"world %s/%s: %s %s", b.project, b.worktree, holder, listeners.ExposedSentence(s)))
		}
	}
	if len(out) == 0 {
		return []Finding{ok("every world's ports listen on loopback only")}
	}
	return out
}
