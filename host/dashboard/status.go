package dashboard

import (
	"fmt"
	"strings"

	"github.com/binkyhq/binky/host/api"
)

// FromStatus is a world of status as the dashboard shows it.
func FromStatus(w api.World) World {
	dw := World{Project: w.Project, Worktree: w.Worktree, Path: w.Path, State: w.State, Reason: w.Reason, Cost: w.Cost, Selection: w.Selection, Host: w.Host}
	if w.Branch != w.Worktree {
		dw.Branch = w.Branch
	}
	for _, sv := range w.Services {
		ds := Service{Name: sv.Name, Kind: sv.Kind, Adapter: sv.Adapter, State: sv.State, Port: sv.Port, URL: sv.URL, Detail: sv.Error, Reason: sv.Reason, Warning: sv.Warning, LogTail: sv.LogTail, LeftOut: sv.LeftOut}
		if sv.Kind == "adapter" || ds.Detail == sv.Reason || strings.HasSuffix(sv.Reason, ds.Detail) {
			ds.Detail = sv.Address // the error is in the reason already
		}
		if sv.Reason == api.ReasonWaits {
			ds.Detail, ds.Reason = sv.Reason, "" // a note, not a fault
		}
		dw.Services = append(dw.Services, ds)
	}
	if v := w.Verify; v != nil {
		sum := fmt.Sprintf("at %s", shortSHA(v.Commit))
		for _, c := range v.Checks {
			if !c.Passed {
				sum = fmt.Sprintf("%q failed (exit %d) at %s", c.Cmd, c.ExitCode, shortSHA(v.Commit))
				break
			}
		}
		if v.Stale {
			sum += ", stale"
		}
		dw.Verify = &Verify{Passed: v.Passed, At: v.At, Summary: sum}
	}
	return dw
}

func shortSHA(c string) string {
	if len(c) > 8 {
		return c[:8]
	}
	return c
}
