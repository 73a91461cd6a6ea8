package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/binkyhq/binky/host/admission"
)

// checkResources holds free memory and disk against the admission reserves
// the daemon applies (docs/admission.md): the defaults, or what `binky
// reserve` recorded in the registry, read without writing anything.
func checkResources(ctx context.Context, e *Env) []Finding {
	dir := e.Home
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	s, err := admission.System{Dir: dir}.Sample(ctx)
	if err != nil {
		return []Finding{skip("free memory and disk are not measured on %s: %v", e.GOOS, err)}
	}
	lim, from := reserves(e, s)
	var out []Finding
	switch {
	case s.MemTotal == 0:
		out = append(out, skip("free memory is not measured on %s", e.GOOS))
	case lim.RAMReserve > 0 && s.RAMFreePct() < lim.RAMReserve:
		out = append(out, warn("binky down <a world you are not using>  (or lower it: binky reserve --ram <pct>)",
			"free RAM %.0f%% is below the %.0f%% reserve (%s): new worlds queue and the newest running one may be suspended", s.RAMFreePct(), lim.RAMReserve, from))
	default:
		out = append(out, ok("free RAM %.0f%% (reserve %.0f%%, %s)", s.RAMFreePct(), lim.RAMReserve, from))
	}
	switch {
	case s.DiskTotal == 0:
		out = append(out, skip("free disk is not measured on %s", e.GOOS))
	case lim.DiskHeadroom > 0 && s.DiskFreeGB() < lim.DiskHeadroom:
		out = append(out, fail("binky remove <a world you no longer need>  (or free space on the disk of "+dir+")",
			"free disk %.1f GB on the disk of %s is below the %.1f GB headroom (%s): new worlds queue", s.DiskFreeGB(), dir, lim.DiskHeadroom, from))
	default:
		out = append(out, ok("free disk %.1f GB on the disk of %s (headroom %.1f GB, %s)", s.DiskFreeGB(), dir, lim.DiskHeadroom, from))
	}
	return out
}

// reserves are the machine-wide admission bounds as the daemon computes
// them: the defaults (the disk headroom capped at a twentieth of the disk),
// then the registry's settings.
func reserves(e *Env, s admission.Sample) (admission.Limits, string) {
	lim := admission.Limits{RAMReserve: admission.DefaultRAMReserve, DiskHeadroom: admission.DefaultDiskHeadroom}
	if s.DiskTotal > 0 {
		lim.DiskHeadroom = min(lim.DiskHeadroom, float64(s.DiskTotal)/20/1e9)
	}
	from := "the defaults"
	conn, err := openRO(registryPath(e))
	if err != nil {
		return lim, from
	}
	defer conn.Close()
	_ = sqlitex.Execute(conn, `SELECT key, value FROM settings WHERE key IN ('ram_reserve', 'disk_headroom')`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error {
			f, err := strconv.ParseFloat(st.ColumnText(1), 64)
			if err != nil {
				return nil
			}
			switch st.ColumnText(0) {
			case "ram_reserve":
				lim.RAMReserve = f
			case "disk_headroom":
				lim.DiskHeadroom = f
			}
			from = "set with binky reserve"
			return nil
		},
	})
	return lim, from
}
