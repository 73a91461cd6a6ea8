package daemon

import "net/http"

// dashboardHandler serves http://binky.localhost.
func (d *Daemon) dashboardHandler() http.Handler { return nil }
