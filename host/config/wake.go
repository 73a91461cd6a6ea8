package config

import "fmt"

// checkWake applies the rules of per-service wake: wake is for a cmd
// service with a url (a request through the proxy is what wakes it),
// idle_suspend needs wake, and a service that starts with the world never
// depends on one that waits for its first request (it would start
// without it).
func checkWake(d *decoder, c *Config) {
	for _, name := range c.Order {
		s := c.Services[name]
		if s.IsAdapter() {
			continue // serviceKind refused the keys
		}
		path := []string{"services", name}
		if s.Wake && s.URL == "" {
			d.errorf(join(path, "wake"), `give it url = "…" (its first request through the proxy starts it), or remove wake`,
				"services.%s sets wake = true but has no url: no request would ever start it", name)
		}
		if s.IdleSuspend > 0 && !s.Wake {
			d.errorf(join(path, "idle_suspend"), "add wake = true (it starts again on its next request), or remove idle_suspend",
				"services.%s sets idle_suspend without wake = true: once stopped, nothing would start it again", name)
		}
		if s.Wake {
			continue
		}
		for i, dep := range s.DependsOn {
			if ds := c.Services[dep]; ds != nil && ds.Wake {
				d.errorf(join(path, "depends_on", elem(i)), fmt.Sprintf("set wake = true on services.%s too (waking it wakes %s first), or remove wake from services.%s", name, dep, dep),
					"services.%s starts with the world but depends on %s, which waits for its first request", name, dep)
			}
		}
	}
}
