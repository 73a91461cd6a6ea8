package supervisor

import "errors"

// errNoSuspend: Windows has no group stop signal; suspending a job's
// threads is not built yet.
var errNoSuspend = errors.New("suspending processes is not supported on Windows yet")

func pauseGroup(int, bool) error { return errNoSuspend }

func pausePid(int, bool) error { return errNoSuspend }
