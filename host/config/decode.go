package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// The schema: every key a binky.toml may hold, per table.
var (
	topKeys      = []string{"project", "services", "agents", "worktree", "admission", "profiles"}
	projectKeys  = []string{"name", "https", "port_range", "env_file", "worktree_dir", "golden_keep", "max_parallel", "ram_reserve", "disk_headroom", "wake", "idle_suspend", "secrets", "hostname", "apex", "stable_names"}
	commonKeys   = []string{"cmd", "adapter", "depends_on", "env"}
	cmdKeys      = []string{"cwd", "env_file", "ports", "url", "host", "health", "restart", "watch", "stop_signal", "stop_timeout", "wake", "idle_suspend"}
	adapterKeys  = []string{"admin_url", "migrate", "seed", "clone_from", "inputs", "timeout", "config"}
	healthKeys   = []string{"http", "tcp", "exec", "timeout", "interval"}
	agentsKeys   = []string{"expose", "verify", "browser_logs"}
	worktreeKeys = []string{"copy", "copy_from", "setup", "teardown", "inputs", "timeout"}
	serviceKeys  = slices.Concat(commonKeys, cmdKeys, adapterKeys)
)

var (
	projectNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })
	adapterNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })
	envNameRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	portNameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`) })
	serviceNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`) })
	cloneFromRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`) })
)

// decoder turns the generic TOML tree into a Config, collecting
// diagnostics as it goes.
type decoder struct {
	file  string
	pos   posIndex
	raw   map[string]any
	diags Diagnostics
}

func (d *decoder) report(sev Severity, path []string, hint, format string, args ...any) {
	p := d.pos.lookup(path...)
	d.diags = append(d.diags, Diagnostic{
		File: d.file, Line: p.line, Col: p.col, Severity: sev,
		Message: fmt.Sprintf(format, args...), Hint: hint,
	})
}

func (d *decoder) errorf(path []string, hint, format string, args ...any) {
	d.report(SeverityError, path, hint, format, args...)
}

func (d *decoder) warnf(path []string, hint, format string, args ...any) {
	d.report(SeverityWarning, path, hint, format, args...)
}

func (d *decoder) notef(path []string, format string, args ...any) {
	d.report(SeverityNote, path, "", format, args...)
}

// keyName renders a path the way it would be written in TOML.
func keyName(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if strings.HasPrefix(p, "#") {
			fmt.Fprintf(&b, "[%s]", p[1:])
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		if p != "" && strings.IndexFunc(p, func(r rune) bool { return r >= 0x80 || !isBare(byte(r)) }) < 0 {
			b.WriteString(p)
		} else {
			b.WriteString(quote(p))
		}
	}
	return b.String()
}

func join(path []string, more ...string) []string {
	return append(slices.Clip(path), more...)
}

// keysInOrder returns m's keys in the order they are written.
func (d *decoder) keysInOrder(path []string, m map[string]any) []string {
	type kp struct {
		key string
		at  pos
	}
	keys := make([]kp, 0, len(m))
	for k := range m {
		keys = append(keys, kp{k, d.pos.lookup(join(path, k)...)})
	}
	slices.SortFunc(keys, func(a, b kp) int {
		if a.at.line != b.at.line {
			return a.at.line - b.at.line
		}
		if a.at.col != b.at.col {
			return a.at.col - b.at.col
		}
		return strings.Compare(a.key, b.key)
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.key
	}
	return out
}

// typeName names a decoded TOML value's type for messages.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a datetime"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

func (d *decoder) unknown(path []string, key string, known []string, table string) {
	d.errorf(join(path, key), didYouMean(key, known, "the keys of "+table+" are "+strings.Join(known, ", ")),
		"unknown key %s in %s", quote(key), table)
}

func (d *decoder) str(v any, path []string) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	hint := "quote it"
	if _, ok := v.([]any); ok {
		hint = "give a single string"
	}
	d.errorf(path, hint, "%s must be a string, not %s", keyName(path), typeName(v))
	return "", false
}

func (d *decoder) nonEmpty(v any, path []string) (string, bool) {
	s, ok := d.str(v, path)
	if ok && strings.TrimSpace(s) == "" {
		d.errorf(path, "give a value or remove the key", "%s is empty", keyName(path))
		return "", false
	}
	return s, ok
}

func (d *decoder) boolean(v any, path []string) (bool, bool) {
	if b, ok := v.(bool); ok {
		return b, true
	}
	d.errorf(path, "write true or false, unquoted", "%s must be a boolean, not %s", keyName(path), typeName(v))
	return false, false
}

func (d *decoder) strList(v any, path []string) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		hint := `write a list: ["…"]`
		if s, isStr := v.(string); isStr {
			hint = fmt.Sprintf("write a list: [%s]", quote(s))
		}
		d.errorf(path, hint, "%s must be an array of strings, not %s", keyName(path), typeName(v))
		return nil, false
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, e := range arr {
		s, isStr := e.(string)
		if !isStr {
			d.errorf(join(path, elem(i)), "quote it", "%s must be a string, not %s", keyName(join(path, elem(i))), typeName(e))
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

func (d *decoder) duration(v any, path []string) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		hint := `write a duration string such as "30s" or "500ms"`
		if n, isInt := v.(int64); isInt {
			hint = fmt.Sprintf(`write it with a unit, e.g. "%ds"`, n)
		}
		d.errorf(path, hint, "%s must be a duration string, not %s", keyName(path), typeName(v))
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		d.errorf(path, `write a duration such as "30s", "1m30s" or "500ms"`, "%s: %s is not a duration", keyName(path), quote(s))
		return 0, false
	}
	if dur <= 0 {
		d.errorf(path, "give a positive duration, or remove the key for the default", "%s must be positive, not %s", keyName(path), quote(s))
		return 0, false
	}
	return dur, true
}

func (d *decoder) table(v any, path []string, hint string) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	d.errorf(path, hint, "%s must be a table, not %s", keyName(path), typeName(v))
	return nil, false
}

// config decodes the whole document.
func (d *decoder) config(raw map[string]any) *Config {
	d.raw = raw
	c := &Config{File: d.file, Services: map[string]*Service{}, pos: d.pos}
	for _, k := range d.keysInOrder(nil, raw) {
		v := raw[k]
		switch k {
		case "project":
			if m, ok := d.table(v, []string{k}, `write a [project] table with name = "…"`); ok {
				d.project(&c.Project, m)
			}
		case "services":
			if m, ok := d.table(v, []string{k}, "write each service as its own [services.<name>] table"); ok {
				d.services(c, m)
			}
		case "agents":
			if m, ok := d.table(v, []string{k}, "write an [agents] table with expose and verify"); ok {
				d.agents(&c.Agents, m)
			}
		case "worktree":
			if m, ok := d.table(v, []string{k}, `write a [worktree] table with copy = ["…"] and setup = ["…"]`); ok {
				d.worktree(c, m)
			}
		case "admission":
			if m, ok := d.table(v, []string{k}, "write an [admission] table with max_parallel, jobs, ram_reserve, …"); ok {
				d.admissionTable(&c.Project, m)
			}
		case "profiles":
			if m, ok := d.table(v, []string{k}, `write each profile as its own [profiles.<name>] table with services = ["…"]`); ok {
				d.profiles(c, m)
			}
		default:
			d.unknown(nil, k, topKeys, "binky.toml")
		}
	}
	d.worktreeRefs(c)
	if _, ok := raw["project"]; !ok {
		d.errorf(nil, `add a [project] table with name = "…"`, "missing [project] table")
	}
	return c
}

func (d *decoder) project(p *Project, m map[string]any) {
	path := []string{"project"}
	for _, k := range d.keysInOrder(path, m) {
		v, kp := m[k], join(path, k)
		switch k {
		case "name":
			s, ok := d.str(v, kp)
			if !ok {
				break
			}
			p.Name = s
			switch {
			case !projectNameRE().MatchString(s):
				d.errorf(kp, "use lowercase letters, digits and -, starting with a letter or digit", "project.name %s is not a valid name", quote(s))
			case len(s) > 63 || strings.HasSuffix(s, "-") || strings.HasPrefix(s, "xn--"):
				d.errorf(kp, "it becomes a hostname label: at most 63 characters, not ending in - nor starting with xn--", "project.name %s cannot be a hostname label", quote(s))
			}
		case "https":
			p.HTTPS, _ = d.boolean(v, kp)
		case "port_range":
			d.portRange(p, v, kp)
		case "env_file":
			p.EnvFile, _ = d.nonEmpty(v, kp)
		case "worktree_dir":
			p.WorktreeDir, _ = d.nonEmpty(v, kp)
		case "golden_keep":
			d.goldenKeep(p, v, kp)
		case "max_parallel", "ram_reserve", "disk_headroom", "wake", "idle_suspend":
			d.admission(p, k, v, kp)
		case "secrets":
			d.secrets(p, v, kp)
		case "hostname", "apex", "stable_names":
			d.names(p, k, v, kp)
		default:
			d.unknown(path, k, projectKeys, "[project]")
		}
	}
	if _, ok := m["name"]; !ok {
		d.errorf(path, `add name = "…" with lowercase letters, digits and -`, "project.name is missing")
	}
	d.namesAgree(p, path)
}

func (d *decoder) portRange(p *Project, v any, path []string) {
	const hint = "write port_range = [lo, hi] with 1024 <= lo <= hi <= 65535 (both ends included)"
	arr, ok := v.([]any)
	if !ok || len(arr) != 2 {
		what := typeName(v)
		if ok {
			what = fmt.Sprintf("an array of %d", len(arr))
		}
		d.errorf(path, hint, "project.port_range must be two integers, not %s", what)
		return
	}
	var r [2]int
	for i, e := range arr {
		n, isInt := e.(int64)
		if !isInt {
			d.errorf(join(path, elem(i)), hint, "project.port_range[%d] must be an integer, not %s", i, typeName(e))
			return
		}
		if n < 1024 || n > 65535 {
			d.errorf(join(path, elem(i)), hint, "project.port_range[%d] = %d is outside 1024-65535", i, n)
			return
		}
		r[i] = int(n)
	}
	if r[0] > r[1] {
		d.errorf(path, hint, "project.port_range [%d, %d] is empty: lo must not be above hi", r[0], r[1])
		return
	}
	p.PortRange = r
}

func (d *decoder) agents(a *Agents, m map[string]any) {
	path := []string{"agents"}
	for _, k := range d.keysInOrder(path, m) {
		v, kp := m[k], join(path, k)
		switch k {
		case "expose":
			a.Expose, _ = d.strList(v, kp)
		case "verify":
			list, _ := d.strList(v, kp)
			for i, s := range list {
				if strings.TrimSpace(s) == "" {
					d.errorf(join(kp, elem(i)), "give a command or remove the entry", "agents.verify[%d] is empty", i)
				}
			}
			a.Verify = list
		case "browser_logs":
			a.BrowserLogs, _ = d.boolean(v, kp)
		default:
			d.unknown(path, k, agentsKeys, "[agents]")
		}
	}
}

func (d *decoder) services(c *Config, m map[string]any) {
	for _, name := range d.keysInOrder([]string{"services"}, m) {
		path := []string{"services", name}
		sm, ok := d.table(m[name], path, fmt.Sprintf("write [%s] with cmd or adapter", keyName(path)))
		if !ok {
			continue
		}
		c.Services[name] = d.service(name, sm)
		c.Order = append(c.Order, name)
	}
}

// secrets decodes [project] secrets: a list of ${env.NAME} variable names
// whose values binky masks although their names do not look secret.
func (d *decoder) secrets(p *Project, v any, path []string) {
	list, ok := d.strList(v, path)
	if !ok {
		return
	}
	for i, n := range list {
		if !envNameRE().MatchString(n) {
			d.errorf(join(path, elem(i)), "list variable names as written in ${env.NAME}, e.g. secrets = [\"SESSION_SEED\"]", "project.secrets: %s is not a variable name", quote(n))
			continue
		}
		p.Secrets = append(p.Secrets, n)
	}
}
