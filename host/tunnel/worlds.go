package tunnel

import (
	"strconv"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/remote"
)

// Worlds are the worlds of the hosts reached, each marked with its host
// (and "reconnecting to HOST" while its road is down), their URLs and
// addresses as they answer here: through the local proxy at proxyPort and
// tlsPort, and the forwards. With localPorts, each service's port is its
// local forward's too (0 when it has none): what the dashboard shows.
func (m *Manager) Worlds(proxyPort, tlsPort int, localPorts bool) []api.World {
	if m == nil {
		return nil
	}
	var out []api.World
	for _, s := range m.Snapshots() {
		for _, w := range s.Worlds {
			w.Host = s.Host
			if !s.Up {
				w.Reason = "reconnecting to " + s.Host
			}
			svcs := make([]api.Service, len(w.Services))
			for i, sv := range w.Services {
				sv.URL, _ = remote.Rewrite(sv.URL, s.Forwards, proxyPort, tlsPort)
				sv.Address, _ = remote.Rewrite(sv.Address, s.Forwards, proxyPort, tlsPort)
				if localPorts && sv.Port != 0 {
					sv.Port = s.Forwards[sv.Port]
				}
				svcs[i] = sv
			}
			w.Services = svcs
			out = append(out, w)
		}
	}
	return out
}

// Result is s as the attach op answers it.
func (s Snapshot) Result() api.AttachResult {
	res := api.AttachResult{Host: s.Host, Up: s.Up, Error: s.Error, Worlds: s.Worlds}
	if len(s.Forwards) > 0 {
		res.Forwards = map[string]int{}
		for p, l := range s.Forwards {
			res.Forwards[strconv.Itoa(p)] = l
		}
	}
	return res
}
