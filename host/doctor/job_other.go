//go:build !windows

package doctor

import "context"

// checkJob: job objects are Windows' (job_windows.go); a Unix daemon
// leaves its session with setsid.
func checkJob(context.Context, *Env) []Finding {
	return []Finding{skip("job objects are Windows': the daemon leaves the session with setsid")}
}
