package api

import "github.com/binkyhq/binky/host/state"

// DecodeStatusTable decodes the result of a status reply (b: one JSON
// object) into r as json.Unmarshal followed by r.ForTable would: the
// fields the status table prints, the others skipped (a daemon asked with
// StatusArgs.Table sends few of them; an older one sends all). It exists
// because encoding/json's reflection was most of what `binky status`
// cost with many worlds (issue 44). It reads JSON as the daemon writes it;
// anything else it does not follow (a key in another case or with an
// escape, a key given twice, a value of the wrong type) is an error, on
// which the caller decodes with encoding/json instead. r should be zero.
func DecodeStatusTable(b []byte, r *StatusResult) error {
	d := tableDecoder{b: b}
	if d.null() {
		return d.end()
	}
	if err := d.object(statusKeys, func(k int) error {
		switch k {
		case 0:
			return d.worlds(&r.Worlds)
		case 1:
			return d.ptr(func() error {
				r.Pressure = new(Pressure)
				return d.pressure(r.Pressure)
			})
		case 2:
			return d.ptr(func() error {
				r.Proxy = new(ProxyInfo)
				return d.proxy(r.Proxy)
			})
		case 3:
			return d.ptr(func() error {
				r.Degraded = new(Degraded)
				return d.degraded(r.Degraded)
			})
		default:
			return d.worlds(&r.Remote)
		}
	}); err != nil {
		return err
	}
	return d.end()
}

// The keys each object's decoder reads, in the order of its switch; any
// other is skipped, unless it differs from one of these in case only.
var (
	statusKeys   = []string{"worlds", "pressure", "proxy", "degraded", "remote"}
	worldKeys    = []string{"project", "worktree", "branch", "repo", "state", "reason", "ports", "services", "verify", "queue", "selection", "host", "stable_name"}
	serviceKeys  = []string{"name", "state", "pid", "warning", "port", "url", "address", "error", "reason", "log_tail", "clone", "left_out"}
	verifyKeys   = []string{"passed", "commit", "dirty", "at", "stale"}
	queueKeys    = []string{"position", "reason", "limit"}
	pressureKeys = []string{"ram_free_pct", "ram_reserve", "disk_free_gb", "disk_headroom", "max_parallel", "running", "queued", "jobs", "jobs_running", "jobs_queued"}
	proxyKeys    = []string{"port", "url", "note"}
	degradedKeys = []string{"reason", "since"}
)

func (d *tableDecoder) worlds(ws *[]World) error {
	out := []World{}
	n, err := d.array(func(int) error {
		out = append(out, World{})
		return d.world(&out[len(out)-1])
	})
	if err != nil {
		return err
	}
	if n >= 0 {
		*ws = out
	}
	return nil
}

func (d *tableDecoder) world(w *World) error {
	if d.null() {
		return nil
	}
	return d.object(worldKeys, func(k int) error {
		switch k {
		case 0:
			return d.str(&w.Project)
		case 1:
			return d.str(&w.Worktree)
		case 2:
			return d.str(&w.Branch)
		case 3:
			return d.str(&w.Repo)
		case 4:
			s := string(w.State)
			err := d.str(&s)
			w.State = state.World(s)
			return err
		case 5:
			return d.str(&w.Reason)
		case 6:
			_, err := d.array(func(i int) error {
				if i < len(w.Ports) {
					return d.int(&w.Ports[i])
				}
				return d.skip(0)
			})
			return err
		case 7:
			svcs := []Service{}
			n, err := d.array(func(int) error {
				svcs = append(svcs, Service{})
				return d.service(&svcs[len(svcs)-1])
			})
			if n >= 0 {
				w.Services = svcs
			}
			return err
		case 8:
			return d.ptr(func() error {
				w.Verify = new(Verify)
				return d.verify(w.Verify)
			})
		case 9:
			return d.ptr(func() error {
				w.Queue = new(Queue)
				return d.queue(w.Queue)
			})
		case 10:
			return d.str(&w.Selection)
		case 11:
			return d.str(&w.Host)
		default:
			return d.str(&w.StableName)
		}
	})
}

func (d *tableDecoder) service(s *Service) error {
	if d.null() {
		return nil
	}
	return d.object(serviceKeys, func(k int) error {
		switch k {
		case 0:
			return d.str(&s.Name)
		case 1:
			st := string(s.State)
			err := d.str(&st)
			s.State = state.Service(st)
			return err
		case 2:
			return d.int(&s.Pid)
		case 3:
			return d.str(&s.Warning)
		case 4:
			return d.int(&s.Port)
		case 5:
			return d.str(&s.URL)
		case 6:
			return d.str(&s.Address)
		case 7:
			return d.str(&s.Error)
		case 8:
			return d.str(&s.Reason)
		case 9:
			lines := []string{}
			n, err := d.array(func(int) error {
				lines = append(lines, "")
				return d.str(&lines[len(lines)-1])
			})
			if n >= 0 {
				s.LogTail = lines
			} else {
				s.LogTail = nil
			}
			return err
		case 10:
			return d.str(&s.Clone)
		default:
			return d.str(&s.LeftOut)
		}
	})
}

func (d *tableDecoder) verify(v *Verify) error {
	return d.object(verifyKeys, func(k int) error {
		switch k {
		case 0:
			return d.bool(&v.Passed)
		case 1:
			return d.str(&v.Commit)
		case 2:
			return d.bool(&v.Dirty)
		case 3:
			return d.time(&v.At)
		default:
			return d.bool(&v.Stale)
		}
	})
}

func (d *tableDecoder) queue(q *Queue) error {
	return d.object(queueKeys, func(k int) error {
		switch k {
		case 0:
			return d.int(&q.Position)
		case 1:
			return d.str(&q.Reason)
		default:
			return d.str(&q.Limit)
		}
	})
}

func (d *tableDecoder) pressure(p *Pressure) error {
	return d.object(pressureKeys, func(k int) error {
		switch k {
		case 0:
			return d.float(&p.RAMFreePct)
		case 1:
			return d.float(&p.RAMReserve)
		case 2:
			return d.float(&p.DiskFreeGB)
		case 3:
			return d.float(&p.DiskHeadroom)
		case 4:
			return d.int(&p.MaxParallel)
		case 5:
			return d.int(&p.Running)
		case 6:
			return d.int(&p.Queued)
		case 7:
			return d.int(&p.Jobs)
		case 8:
			return d.int(&p.JobsRunning)
		default:
			return d.int(&p.JobsQueued)
		}
	})
}

func (d *tableDecoder) proxy(p *ProxyInfo) error {
	return d.object(proxyKeys, func(k int) error {
		switch k {
		case 0:
			return d.int(&p.Port)
		case 1:
			return d.str(&p.URL)
		default:
			return d.str(&p.Note)
		}
	})
}

func (d *tableDecoder) degraded(g *Degraded) error {
	return d.object(degradedKeys, func(k int) error {
		if k == 0 {
			return d.str(&g.Reason)
		}
		return d.time(&g.Since)
	})
}

// skip reads any JSON value, checking it as encoding/json would.
type ResultDecoder interface {
	DecodeResult(b []byte) error
}

// StatusTable is a StatusResult for the status table: Client.Call decodes
// it with DecodeStatusTable.
type StatusTable struct{ StatusResult }

// DecodeResult is DecodeStatusTable; on an error t is left zero.
func (t *StatusTable) DecodeResult(b []byte) error {
	t.StatusResult = StatusResult{}
	err := DecodeStatusTable(b, &t.StatusResult)
	if err != nil {
		t.StatusResult = StatusResult{}
	}
	return err
}
