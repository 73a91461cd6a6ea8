package config

// admissionKeys are the keys of the [admission] table; all but jobs are
// also read from [project], where the first build put them.
var admissionKeys = []string{"max_parallel", "jobs", "connections", "job_connections", "ram_reserve", "disk_headroom", "wake", "idle_suspend"}

// DefaultJobConnections is what one job is counted for on each server of
// its world's slices when its project sets no job_connections.
const DefaultJobConnections = 10

// admissionTable decodes the [admission] table (docs/admission.md) into
// the project's bounds.
func (d *decoder) admissionTable(p *Project, m map[string]any) {
	path := []string{"admission"}
	for _, k := range d.keysInOrder(path, m) {
		kp := append(path[:1:1], k)
		switch k {
		case "max_parallel", "jobs", "ram_reserve", "disk_headroom", "wake", "idle_suspend":
			d.admission(p, k, m[k], kp)
		case "connections", "job_connections":
			d.connections(p, k, m[k], kp)
		default:
			d.unknown(path, k, admissionKeys, "[admission]")
		}
	}
}

// admission decodes one key that bounds admission (docs/admission.md):
// max_parallel (this project's worlds at once), jobs (its `binky run`
// commands at once), ram_reserve, disk_headroom, wake and idle_suspend.
func (d *decoder) admission(p *Project, key string, v any, path []string) {
	name := keyName(path)
	switch key {
	case "max_parallel":
		n, ok := v.(int64)
		switch {
		case !ok:
			d.errorf(path, "write max_parallel = 4 (worlds of this project running at once)", "%s must be an integer, not %s", name, typeName(v))
		case n < 1 || n > 10000:
			d.errorf(path, "allow at least 1 world, or remove the key to use the machine's bound (binky reserve)", "%s = %d is outside 1-10000", name, n)
		default:
			p.MaxParallel = int(n)
		}
	case "jobs":
		n, ok := v.(int64)
		switch {
		case !ok:
			d.errorf(path, "write jobs = 4 (commands of binky run and verify running at once)", "%s must be an integer, not %s", name, typeName(v))
		case n < 1 || n > 10000:
			d.errorf(path, "allow at least 1 job, or remove the key to use one per core", "%s = %d is outside 1-10000", name, n)
		default:
			p.Jobs = int(n)
		}
	case "ram_reserve":
		f, ok := number(v)
		switch {
		case !ok:
			d.errorf(path, "write ram_reserve = 15 (percent of RAM kept free)", "%s must be a number, not %s", name, typeName(v))
		case f <= 0 || f >= 100:
			d.errorf(path, "give a percentage between 0 and 100, e.g. 15", "%s = %v is outside 0-100", name, f)
		default:
			p.RAMReserve = f
		}
	case "disk_headroom":
		f, ok := number(v)
		switch {
		case !ok:
			d.errorf(path, "write disk_headroom = 5 (GB of disk kept free)", "%s must be a number of GB, not %s", name, typeName(v))
		case f <= 0 || f > 1e6:
			d.errorf(path, "give a positive number of GB, e.g. 5", "%s = %v is not a positive number of GB", name, f)
		default:
			p.DiskHeadroom = f
		}
	case "wake":
		p.Wake, _ = d.boolean(v, path)
	case "idle_suspend":
		p.IdleSuspend, _ = d.duration(v, path)
	}
}

// connections decodes [admission] connections (the bound on each server
// of the project's slices) and job_connections (one job's count there).
func (d *decoder) connections(p *Project, key string, v any, path []string) {
	name := keyName(path)
	hint := "write connections = 80 (connections binky's jobs may hold together on each server of this project's slices)"
	if key == "job_connections" {
		hint = "write job_connections = 20 (connections one binky run of this project opens on each server of its slices)"
	}
	n, ok := v.(int64)
	switch {
	case !ok:
		d.errorf(path, hint, "%s must be an integer, not %s", name, typeName(v))
	case n < 1 || n > 100000:
		d.errorf(path, "give at least 1, or remove the key", "%s = %d is outside 1-100000", name, n)
	case key == "connections":
		p.Connections = int(n)
	default:
		p.JobConnections = int(n)
	}
}

// admissionFootguns warns about admission settings that cannot do what
// was meant: wake = true wakes a world on a request through the proxy,
// and only a service with a url gets a proxy route.
func admissionFootguns(d *decoder, c *Config) {
	if !c.Project.Wake {
		return
	}
	for _, s := range c.Services {
		if s.URL != "" {
			return
		}
	}
	path := []string{"project", "wake"}
	if m, ok := d.raw["admission"].(map[string]any); ok {
		if _, ok := m["wake"]; ok {
			path = []string{"admission", "wake"}
		}
	}
	d.warnf(path, `give a service url = "…" (a request to it wakes the world), or remove wake`,
		"wake = true, but no service has a url: no request reaches a down world, so nothing wakes it")
}

// number reads a TOML integer or float.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
