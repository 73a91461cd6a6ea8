package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/binkyhq/binky/host/tokens"
	"github.com/binkyhq/binky/sdk/names"
)

// signals stop_signal accepts, by their names without SIG.
var signals = []string{"HUP", "INT", "QUIT", "KILL", "USR1", "USR2", "TERM"}

// service decodes one [services.<name>] table.
func (d *decoder) service(name string, m map[string]any) *Service {
	path := []string{"services", name}
	table := "[" + keyName(path) + "]"
	s := &Service{Name: name}
	for _, k := range d.keysInOrder(path, m) {
		v, kp := m[k], join(path, k)
		switch k {
		case "cmd":
			s.Cmd, _ = d.nonEmpty(v, kp)
		case "adapter":
			if a, ok := d.nonEmpty(v, kp); ok {
				s.Adapter = a
				if !adapterNameRE().MatchString(a) {
					d.errorf(kp, "an adapter name is lowercase letters, digits and -, e.g. postgres or redis", "adapter %s is not a valid adapter name", quote(a))
				}
			}
		case "depends_on":
			s.DependsOn, _ = d.strList(v, kp)
		case "env":
			s.Env = d.env(v, kp)
		case "cwd":
			if cwd, ok := d.nonEmpty(v, kp); ok {
				s.Cwd = cwd
				d.cwd(cwd, kp)
			}
		case "env_file":
			s.EnvFile, _ = d.nonEmpty(v, kp)
		case "ports":
			s.Ports = d.ports(v, kp)
		case "url":
			if u, ok := d.nonEmpty(v, kp); ok {
				s.URL = u
				if msg := dnsLabelProblem(u); msg != "" {
					d.errorf(kp, `url is the hostname label, e.g. url = "api" for api.<worktree>.<project>.localhost`, "url %s %s", quote(u), msg)
				}
			}
		case "host":
			if h, ok := d.nonEmpty(v, kp); ok {
				s.Host = h
				if err := names.CheckHostTemplate(h); err != nil {
					d.errorf(kp, `host is the service's hostname before the apex, e.g. host = "{worktree}.{project}"; placeholders: {service}, {worktree}, {branch}, {project}, {user}`, "host %s %v", quote(h), err)
				}
				if _, hasURL := m["url"]; !hasURL {
					d.errorf(kp, `add url = "…" too: only a url service gets a hostname`, "host is set but %s has no url", name)
				}
			}
		case "health":
			s.Health = d.health(v, kp)
		case "restart":
			if r, ok := d.str(v, kp); ok {
				s.Restart = r
				if r != RestartOnFailure && r != RestartAlways && r != RestartNever {
					d.errorf(kp, didYouMean(r, []string{RestartOnFailure, RestartAlways, RestartNever}, "use on-failure, always or never"),
						"restart %s is not a restart policy", quote(r))
				}
			}
		case "watch":
			s.Watch = d.watch(v, kp)
		case "stop_signal":
			s.StopSignal = d.stopSignal(v, kp)
		case "stop_timeout":
			s.StopTimeout, _ = d.duration(v, kp)
		case "wake":
			s.Wake, _ = d.boolean(v, kp)
		case "idle_suspend":
			s.IdleSuspend, _ = d.duration(v, kp)
		case "admin_url":
			s.AdminURL, _ = d.nonEmpty(v, kp)
		case "migrate":
			s.Migrate, _ = d.nonEmpty(v, kp)
		case "seed":
			s.Seed, _ = d.nonEmpty(v, kp)
		case "clone_from":
			if cf, ok := d.nonEmpty(v, kp); ok {
				s.CloneFrom = cf
				if !cloneFromRE().MatchString(cf) || len(cf) > 32 {
					d.errorf(kp, `it names the golden template, e.g. clone_from = "golden": lowercase letters, digits and _, at most 32`, "clone_from %s is not a valid template name", quote(cf))
				}
			}
		case "inputs":
			s.Inputs = d.inputs(v, kp)
		case "timeout":
			s.Timeout, _ = d.duration(v, kp)
		case "config":
			s.Config, _ = d.table(v, kp, "write [services."+name+".config] with the adapter's settings")
		default:
			d.unknown(path, k, serviceKeys, table)
		}
	}
	d.serviceKind(s, path, m)
	if s.Restart == "" || (s.Restart != RestartAlways && s.Restart != RestartNever) {
		s.Restart = DefaultRestart
	}
	if s.StopTimeout == 0 {
		s.StopTimeout = DefaultStopTimeout
	}
	return s
}

// serviceKind enforces exactly one of cmd/adapter and the keys each allows.
func (d *decoder) serviceKind(s *Service, path []string, m map[string]any) {
	name := keyName(path)
	_, hasCmd := m["cmd"]
	_, hasAdapter := m["adapter"]
	switch {
	case hasCmd && hasAdapter:
		d.errorf(join(path, "adapter"), "a service is a process or a slice, never both: split it into a cmd service and an adapter service joined by depends_on",
			"%s sets both cmd and adapter", name)
		return
	case !hasCmd && !hasAdapter:
		d.errorf(path, `add cmd = "…" for a process binky runs, or adapter = "postgres", "redis" or another for a slice of a server`,
			"%s sets neither cmd nor adapter", name)
		return
	}
	for _, k := range d.keysInOrder(path, m) {
		switch {
		case hasCmd && slices.Contains(adapterKeys, k):
			d.errorf(join(path, k), adapterOnlyHint(k), "%s is only for adapter services; %s runs a cmd", k, name)
		case hasAdapter && slices.Contains(cmdKeys, k):
			d.errorf(join(path, k), cmdOnlyHint(k), "%s is only for cmd services; %s is an adapter slice", k, name)
		}
	}
}

func adapterOnlyHint(k string) string {
	switch k {
	case "migrate", "seed":
		return "move it to the adapter service whose slice it fills, so it runs against ${self.url}"
	case "admin_url":
		return "put it on the adapter service, and reach the slice from here with ${<db>.url}"
	}
	return "move it to an adapter service, or remove it"
}

func cmdOnlyHint(k string) string {
	switch k {
	case "watch":
		return "watch restarts a process and an adapter service has none: put it on the cmd service"
	case "env_file":
		return "an adapter service reads ${env.NAME} from [project] env_file"
	case "ports", "url", "health":
		return "an adapter slice has no port: reach it through ${self.url} or ${<name>.url}"
	case "wake", "idle_suspend":
		return "only a cmd service with a url starts on its first request: put it there"
	}
	return "move it to a cmd service, or remove it"
}

func (d *decoder) env(v any, path []string) map[string]string {
	m, ok := d.table(v, path, `write env = { NAME = "value" }`)
	if !ok {
		return nil
	}
	env := make(map[string]string, len(m))
	for _, k := range d.keysInOrder(path, m) {
		kp := join(path, k)
		if !envNameRE().MatchString(k) {
			d.errorf(kp, "a variable name is letters, digits and _, not starting with a digit", "env name %s is not a valid variable name", quote(k))
			continue
		}
		s, isStr := m[k].(string)
		if !isStr {
			hint := "quote it"
			switch x := m[k].(type) {
			case int64:
				hint = fmt.Sprintf(`quote it: %s = "%d"`, k, x)
			case bool:
				hint = fmt.Sprintf(`quote it: %s = "%t"`, k, x)
			}
			d.errorf(kp, hint, "%s must be a string, not %s", keyName(kp), typeName(m[k]))
			continue
		}
		env[k] = s
		if k == tokens.PortEnv && s == "" {
			d.notef(kp, `env PORT = "" unsets $PORT: binky sets none for this service and drops the caller's; pass the port with ${self.port}`)
		}
	}
	return env
}

func (d *decoder) ports(v any, path []string) []string {
	list, _ := d.strList(v, path)
	seen := map[string]bool{}
	var out []string
	for i, p := range list {
		ep := join(path, elem(i))
		switch {
		case !portNameRE().MatchString(p):
			d.errorf(ep, `a port name is letters, digits, _ and -, e.g. ports = ["http", "debug"]`, "port name %s is not valid", quote(p))
		case seen[p]:
			d.errorf(ep, "give each port its own name", "port %s is listed twice", quote(p))
		default:
			seen[p] = true
			out = append(out, p)
		}
	}
	if _, isList := v.([]any); isList && len(list) == 0 {
		d.warnf(path, `name the ports, e.g. ports = ["http"], or remove the key`, "ports is empty: the service asks for no port")
	}
	return out
}

func (d *decoder) watch(v any, path []string) []string {
	list, _ := d.strList(v, path)
	if _, isList := v.([]any); isList && len(list) == 0 {
		d.warnf(path, `list globs relative to the worktree, e.g. watch = ["src/**"], or remove the key`, "watch is empty: nothing will ever restart the service")
	}
	for i, g := range list {
		ep := join(path, elem(i))
		switch {
		case strings.TrimSpace(g) == "":
			d.errorf(ep, "give a glob or remove the entry", "watch[%d] is empty", i)
		case !doublestar.ValidatePattern(g):
			d.errorf(ep, `write a glob such as "src/**/*.go"`, "watch glob %s is not a valid pattern", quote(g))
		case outsideWorktree(g):
			d.warnf(ep, "watch globs are relative to the worktree; a path outside it is shared by every worktree", "watch glob %s points outside the worktree", quote(g))
		}
	}
	return list
}

// inputs decodes an adapter service's inputs: globs relative to the
// worktree root whose files' content keys its golden template.
func (d *decoder) inputs(v any, path []string) []string {
	list, _ := d.strList(v, path)
	if _, isList := v.([]any); isList && len(list) == 0 {
		d.warnf(path, `list the files migrate and seed read, e.g. inputs = ["db/migrations/**"], or remove the key`, "inputs is empty: the golden template cannot follow the branch's migrations")
	}
	for i, g := range list {
		ep := join(path, elem(i))
		switch {
		case strings.TrimSpace(g) == "":
			d.errorf(ep, "give a glob or remove the entry", "inputs[%d] is empty", i)
		case !doublestar.ValidatePattern(g):
			d.errorf(ep, `write a glob such as "db/migrations/**"`, "inputs glob %s is not a valid pattern", quote(g))
		case outsideWorktree(g):
			d.errorf(ep, "inputs are read from the worktree being brought up: write the path relative to its root", "inputs glob %s points outside the worktree", quote(g))
		}
	}
	return list
}

// goldenKeep decodes [project] golden_keep: an integer of at least 1.
func (d *decoder) goldenKeep(p *Project, v any, path []string) {
	n, ok := v.(int64)
	switch {
	case !ok:
		d.errorf(path, "write golden_keep = 3 (how many templates per clone_from to keep)", "project.golden_keep must be an integer, not %s", typeName(v))
	case n < 1 || n > 1000:
		d.errorf(path, "keep at least 1 template (the one worlds clone), at most 1000", "project.golden_keep = %d is outside 1-1000", n)
	default:
		p.GoldenKeep = int(n)
	}
}

func (d *decoder) stopSignal(v any, path []string) string {
	s, ok := d.nonEmpty(v, path)
	if !ok {
		return ""
	}
	n := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if !slices.Contains(signals, n) {
		d.errorf(path, "use one of SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGKILL, SIGUSR1, SIGUSR2", "stop_signal %s is not a signal binky can send", quote(s))
		return ""
	}
	if note := stopSignalNote("SIG" + n); note != "" {
		d.notef(path, "%s", note)
	}
	return "SIG" + n
}

func (d *decoder) health(v any, path []string) *Health {
	h := &Health{Timeout: DefaultHealthTimeout, Interval: DefaultHealthInterval}
	switch x := v.(type) {
	case string:
		if !strings.HasPrefix(x, "http://") && !strings.HasPrefix(x, "https://") {
			hint := `for a command probe write health = { exec = "…" }`
			if looksHostPort(x) {
				hint = fmt.Sprintf("for a TCP probe write health = { tcp = %s }", quote(x))
			}
			d.errorf(path, hint, "health %s is neither an http(s) URL nor a table", quote(x))
			return nil
		}
		h.HTTP = x
		d.checkHTTP(x, path)
		return h
	case map[string]any:
		probes := 0
		for _, k := range d.keysInOrder(path, x) {
			kv, kp := x[k], join(path, k)
			switch k {
			case "http":
				probes++
				if s, ok := d.nonEmpty(kv, kp); ok {
					h.HTTP = s
					d.checkHTTP(s, kp)
				}
			case "tcp":
				probes++
				if s, ok := d.nonEmpty(kv, kp); ok {
					h.TCP = s
					if !looksHostPort(s) {
						d.errorf(kp, `write host:port, e.g. tcp = "localhost:${self.port}"`, "health tcp %s is not host:port", quote(s))
					}
				}
			case "exec":
				probes++
				h.Exec, _ = d.nonEmpty(kv, kp)
			case "timeout":
				if t, ok := d.duration(kv, kp); ok {
					h.Timeout = t
				}
			case "interval":
				if t, ok := d.duration(kv, kp); ok {
					h.Interval = t
				}
			default:
				d.unknown(path, k, healthKeys, "["+keyName(path)+"]")
			}
		}
		switch {
		case probes == 0:
			d.errorf(path, "add exactly one of http, tcp or exec", "%s has no probe", keyName(path))
		case probes > 1:
			var set []string
			for _, k := range []string{"http", "tcp", "exec"} {
				if _, ok := x[k]; ok {
					set = append(set, k)
				}
			}
			d.errorf(join(path, set[1]), "keep exactly one of http, tcp or exec", "%s sets %s: a probe is one kind", keyName(path), strings.Join(set, " and "))
		}
		return h
	}
	d.errorf(path, `write health = "http://localhost:${self.port}/…" or a table with one of http, tcp or exec`,
		"%s must be a URL string or a table, not %s", keyName(path), typeName(v))
	return nil
}

func (d *decoder) checkHTTP(s string, path []string) {
	u, err := url.Parse(placeholders(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.errorf(path, `write a URL such as "http://localhost:${self.port}/healthz"`, "health URL %s is not a valid http(s) URL", quote(s))
	}
}

// placeholders replaces every token with a number, so that a string with
// tokens can be checked for shape.
func placeholders(s string) string {
	for _, r := range tokens.Refs(s) {
		s = strings.Replace(s, "${"+r+"}", "1", 1)
	}
	return s
}

// looksHostPort reports whether s is host:port (tokens allowed).
func looksHostPort(s string) bool {
	host, port, err := net.SplitHostPort(placeholders(s))
	if err != nil || host == "" {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n <= 65535
}

// dnsLabelProblem says why s is not a DNS label, or "".
func dnsLabelProblem(s string) string {
	switch {
	case len(s) > 63:
		return "is longer than 63 characters"
	case strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-"):
		return "starts or ends with -"
	case strings.HasPrefix(s, "xn--"):
		return "starts with xn--"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			if r >= 'A' && r <= 'Z' {
				return "has uppercase letters"
			}
			return "is not a single DNS label of lowercase letters, digits and -"
		}
	}
	return ""
}

// outsideWorktree reports whether a relative-to-the-worktree path is
// absolute or climbs out with "..".
func outsideWorktree(p string) bool {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || strings.HasPrefix(p, "~") || len(p) > 1 && p[1] == ':' {
		return true
	}
	depth := 0
	for part := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch part {
		case ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// cwd checks a service's cwd. An absolute one is honoured as written (an
// app installed outside the repository, such as /usr/share/redmine): it
// must be an existing directory, and every world of the project runs
// there, which check notes. A relative one that climbs out of the
// worktree is shared by every worktree: a warning.
func (d *decoder) cwd(cwd string, kp []string) {
	switch {
	case strings.Contains(cwd, "${"):
	case filepath.IsAbs(cwd):
		st, err := os.Stat(cwd)
		switch {
		case err != nil:
			d.errorf(kp, "create it, or write cwd relative to the worktree root", "cwd %s does not exist", quote(cwd))
		case !st.IsDir():
			d.errorf(kp, "cwd is the directory the command runs in", "cwd %s is not a directory", quote(cwd))
		default:
			d.notef(kp, "cwd %s is absolute: the service runs there in every world, not in its worktree", quote(cwd))
		}
	case outsideWorktree(cwd):
		d.warnf(kp, "cwd is relative to the worktree root; a directory outside it is shared by every worktree", "cwd %s points outside the worktree", quote(cwd))
	}
}

// Dir is the directory a cmd service runs in: its cwd when absolute,
// else cwd under root (the worktree), else root.
func (s *Service) Dir(root string) string {
	switch {
	case s.Cwd == "":
		return root
	case filepath.IsAbs(s.Cwd):
		return s.Cwd
	}
	return filepath.Join(root, s.Cwd)
}

// UnsetsPort reports whether the service's env writes PORT = "": binky
// then sets no $PORT for it and removes one the caller's environment
// has (some frameworks read $PORT as "listen on every interface").
func (s *Service) UnsetsPort() bool {
	v, ok := s.Env[tokens.PortEnv]
	return ok && v == ""
}
