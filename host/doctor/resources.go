package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// The reserves doctor holds free memory and disk against. They are the
// floor below which starting another world is likely to fail (a server's
// slice, a build, a migrate), not the admission queue's settings.
const (
	ReserveRAM  = 1 << 30
	ReserveDisk = 2 << 30
)

func checkResources(ctx context.Context, e *Env) []Finding {
	var out []Finding
	if avail, known := freeRAM(); !known {
		out = append(out, skip("free memory is not measured on %s", e.GOOS))
	} else if avail < ReserveRAM {
		out = append(out, warn("binky down <a world you are not using>  (binky status lists them)",
			"only %s of memory is available, below the %s reserve", size(avail), size(ReserveRAM)))
	} else {
		out = append(out, ok("%s of memory available", size(avail)))
	}
	dir := e.Home
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	if free, known := freeDisk(dir); !known {
		out = append(out, skip("free disk is not measured on %s", e.GOOS))
	} else if free < ReserveDisk {
		out = append(out, fail("binky remove <a world you no longer need>  (or free space on the disk of "+dir+")",
			"only %s free on the disk of %s, below the %s reserve", size(free), dir, size(ReserveDisk)))
	} else {
		out = append(out, ok("%s free on the disk of %s", size(free), dir))
	}
	return out
}

func size(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%d MiB", n>>20)
	}
}
