package config

// admission decodes the [project] keys that bound admission
// (docs/admission.md): max_parallel, ram_reserve, disk_headroom, wake and
// idle_suspend.
func (d *decoder) admission(p *Project, key string, v any, path []string) {
	switch key {
	case "max_parallel":
		n, ok := v.(int64)
		switch {
		case !ok:
			d.errorf(path, "write max_parallel = 4 (worlds of this project running at once)", "project.max_parallel must be an integer, not %s", typeName(v))
		case n < 1 || n > 10000:
			d.errorf(path, "allow at least 1 world, or remove the key to use the machine's bound (binky reserve)", "project.max_parallel = %d is outside 1-10000", n)
		default:
			p.MaxParallel = int(n)
		}
	case "ram_reserve":
		f, ok := number(v)
		switch {
		case !ok:
			d.errorf(path, "write ram_reserve = 15 (percent of RAM kept free)", "project.ram_reserve must be a number, not %s", typeName(v))
		case f <= 0 || f >= 100:
			d.errorf(path, "give a percentage between 0 and 100, e.g. 15", "project.ram_reserve = %v is outside 0-100", f)
		default:
			p.RAMReserve = f
		}
	case "disk_headroom":
		f, ok := number(v)
		switch {
		case !ok:
			d.errorf(path, "write disk_headroom = 5 (GB of disk kept free)", "project.disk_headroom must be a number of GB, not %s", typeName(v))
		case f <= 0 || f > 1e6:
			d.errorf(path, "give a positive number of GB, e.g. 5", "project.disk_headroom = %v is not a positive number of GB", f)
		default:
			p.DiskHeadroom = f
		}
	case "wake":
		p.Wake, _ = d.boolean(v, path)
	case "idle_suspend":
		p.IdleSuspend, _ = d.duration(v, path)
	}
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
