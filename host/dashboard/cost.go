package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/api"
)

// costLine is a world's cost as the card shows it: "memory 64.0 MiB · cpu
// 1.5% · 3 processes · disk 12.0 MiB (1m ago) · slices 2.1 MiB"; "" when
// unknown.
func costLine(c *api.Cost) string {
	if c == nil {
		return ""
	}
	parts := []string{"memory " + size(max(c.Memory, c.RSS))}
	if c.CPUPercent >= 0 {
		parts = append(parts, fmt.Sprintf("cpu %.1f%%", c.CPUPercent))
	}
	parts = append(parts, fmt.Sprintf("%d process%s", c.Processes, map[bool]string{true: "", false: "es"}[c.Processes == 1]))
	if d := c.Disk; d != nil {
		s := "disk " + size(d.Untracked+d.Ignored)
		if d.Partial {
			s = "disk ≥" + size(d.Untracked+d.Ignored)
		}
		age := time.Duration(d.AgeSeconds * float64(time.Second)).Round(time.Second)
		parts = append(parts, fmt.Sprintf("%s (%s ago)", s, age))
	}
	if len(c.Slices) > 0 {
		s := "slices " + size(c.SliceBytes)
		for _, sl := range c.Slices {
			if sl.Approximate || sl.Unsupported || sl.Error != "" {
				s = "slices ~" + size(c.SliceBytes)
				break
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// size writes n bytes in binary units.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n)/unit, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if f < unit {
			break
		}
		f, u = f/unit, next
	}
	return fmt.Sprintf("%.1f %s", f, u)
}
