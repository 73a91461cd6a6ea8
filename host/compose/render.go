package compose

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/internal/tomlstr"
)

// Summary says what Render mapped and what it left for the user.
type Summary struct {
	Project string `json:"project"`
	// Files are the compose files read (and .env when its key names were).
	Files []string `json:"files"`
	// Adapters are the services written as adapter slices.
	Adapters []Mapped `json:"adapters"`
	// TODO are the services written as commented blocks, with why.
	TODO []Mapped `json:"todo"`
	// Env are the ${env.NAME} names the file uses; Missing those .env does
	// not define (set them in the shell or .env before binky up).
	Env     []string `json:"env"`
	Missing []string `json:"missing_env"`
	// Kept are the variables written with compose's plain value (no
	// secret by name or value), sorted: the names, never the values.
	Kept []string `json:"kept_env"`
	// V1 are the compose files read in compose's first format.
	V1 []string `json:"v1_files,omitempty"`
}

// Mapped is one compose service and what init made of it.
type Mapped struct {
	Service string `json:"service"`
	Image   string `json:"image,omitempty"`
	Adapter string `json:"adapter,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// reserved are token namespaces a service may not be named.
var reserved = []string{"self", "env", "worktree", "project"}

var (
	nonName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9-]+`) })
	nonSvc   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })
	localURL = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`https?://(?:localhost|127\.0\.0\.1)(?::(\d+))?(/[A-Za-z0-9/_.-]*)?(?:[\s'"]|$)`)
	})
)

// ProjectName makes a valid project.name from s (compose's name: or the
// directory's), or "app" when nothing usable is left.
func ProjectName(s string) string {
	n := strings.Trim(nonName().ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	if n == "" || strings.HasPrefix(n, "xn--") {
		return "app"
	}
	return n
}

// renderer holds what Render learns about the project as it writes it.
type renderer struct {
	p       *Project
	names   map[string]string // compose name → binky service name
	adapter map[string]string // compose name → adapter, for the services written as slices
	envUsed []string
	kept    []string
	buf     bytes.Buffer
}

// Render writes p as a binky.toml for a project named name (ProjectName
// of the directory when p has no name:). The file has no config errors and
// no value of any environment variable.
func Render(p *Project, dirName string) ([]byte, Summary) {
	r := &renderer{p: p, names: map[string]string{}, adapter: map[string]string{}}
	name := ProjectName(p.Name)
	if p.Name == "" {
		name = ProjectName(dirName)
	}
	sum := Summary{Project: name, Files: slices.Clone(p.Files)}
	if p.EnvFile != "" {
		sum.Files = append(sum.Files, p.EnvFile+" (key names only)")
	}
	taken := map[string]bool{}
	for _, s := range p.Services {
		n := nonSvc().ReplaceAllString(s.Name, "-")
		if n == "" || n[0] == '-' {
			n = "svc" + n
		}
		if slices.Contains(reserved, n) {
			n += "-svc"
		}
		for base, i := n, 2; taken[n]; i++ {
			n = fmt.Sprintf("%s-%d", base, i)
		}
		taken[n] = true
		r.names[s.Name] = n
		if a := AdapterFor(s.Image); a != "" && !s.Build {
			r.adapter[s.Name] = a
		}
	}

	w := &r.buf
	fmt.Fprintf(w, "# binky.toml written by `binky init` from %s.\n", strings.Join(sum.Files, " and "))
	if len(p.V1) > 0 {
		fmt.Fprintf(w, "# %s is in compose's first format (services at the top level).\n", strings.Join(p.V1, " and "))
	}
	w.WriteString("# Plain values of compose's environment: are kept as written. A secret (by its\n")
	w.WriteString("# name or its value), and each variable compose reads from the shell or .env,\n")
	w.WriteString("# is a ${env.NAME} reference, read from your shell and then from env_file;\n")
	w.WriteString("# init never reads a value of .env. Fill in the TODOs, then run `binky check`.\n")
	w.WriteString("# Every key: docs/config.md.\n\n")
	w.WriteString("[project]\n")
	fmt.Fprintf(w, "name = %s\n", tomlstr.Quote(name))
	if p.EnvFile != "" {
		fmt.Fprintf(w, "env_file = %s\n", tomlstr.Quote(p.EnvFile))
	}

	for _, s := range p.Services {
		w.WriteString("\n")
		if a, ok := r.adapter[s.Name]; ok {
			r.slice(s, a)
			sum.Adapters = append(sum.Adapters, Mapped{Service: r.names[s.Name], Image: s.Image, Adapter: a})
			continue
		}
		reason := r.todo(s)
		sum.TODO = append(sum.TODO, Mapped{Service: r.names[s.Name], Image: s.Image, Reason: reason})
	}

	slices.Sort(r.kept)
	sum.Kept = slices.Compact(r.kept)
	sum.V1 = slices.Clone(p.V1)
	slices.Sort(r.envUsed)
	sum.Env = slices.Compact(r.envUsed)
	for _, e := range sum.Env {
		if !slices.Contains(p.EnvKeys, e) {
			sum.Missing = append(sum.Missing, e)
		}
	}
	return r.buf.Bytes(), sum
}

func (r *renderer) env(name string) string {
	r.envUsed = append(r.envUsed, name)
	return "${env." + name + "}"
}

// slice writes an adapter service.
func (r *renderer) slice(s *Service, adapter string) {
	w := &r.buf
	name := r.names[s.Name]
	fmt.Fprintf(w, "# %s: compose ran %s. Binky carves each world a slice\n", oneLine(s.Name), oneLine(s.Image))
	w.WriteString("# of a server you already run.")
	if len(s.Ports) > 0 {
		w.WriteString(" A slice needs no port of its own (compose published")
		for _, p := range s.Ports {
			fmt.Fprintf(w, " %s", oneLine(p.Spec))
		}
		w.WriteString(").")
	}
	w.WriteString("\n")
	if len(s.Env) > 0 || s.Health != nil {
		w.WriteString("# Its environment: and healthcheck configure that server, not a slice.\n")
	}
	fmt.Fprintf(w, "[services.%s]\n", name)
	fmt.Fprintf(w, "adapter = %s\n", tomlstr.Quote(adapter))
	if adapter == "sqlite" {
		return
	}
	v := strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_ADMIN_URL"
	where := "the server"
	if len(s.Ports) > 0 && s.Ports[0].Host > 0 {
		where = fmt.Sprintf("the server (compose's listened on 127.0.0.1:%d)", s.Ports[0].Host)
	}
	fmt.Fprintf(w, "# TODO: set %s in your shell or .env to the admin address of\n", v)
	fmt.Fprintf(w, "# %s, with an account that can create and drop slices\n", where)
	w.WriteString("# (docs/adapters.md says which privileges each adapter needs).\n")
	fmt.Fprintf(w, "admin_url = %s\n", tomlstr.Quote(r.env(v)))
	if adapter == "redis" || adapter == "valkey" {
		// A world's keys are its own only under its prefix: a client
		// that writes elsewhere is refused by the slice's ACL user.
		w.WriteString("# Each world's keys live under its own prefix, the only keys its user may touch:\n")
		fmt.Fprintf(w, "# give your client ${%s.prefix} (ioredis keyPrefix) or ${%s.namespace}\n", name, name)
		w.WriteString("# (BullMQ's prefix option, redis-namespace), not a prefix of your own.\n")
	}
}

// todo writes a service binky cannot run from its image, commented out,
// and returns why.
func (r *renderer) todo(s *Service) string {
	w := &r.buf
	name := r.names[s.Name]
	var reason string
	switch {
	case s.Build:
		reason = "built from source (build:): compose runs it in a container"
	case s.Image == "":
		reason = "no image and no build"
	default:
		reason = fmt.Sprintf("image %s is not a server any adapter slices: compose runs it in a container", oneLine(s.Image))
	}
	fmt.Fprintf(w, "# %s: %s.\n", oneLine(s.Name), reason)
	fmt.Fprintf(w, "# TODO: write the command that runs %s on the host, then uncomment the block.\n", oneLine(s.Name))
	if s.CommandAt != "" {
		fmt.Fprintf(w, "# compose's command for the container is at %s.\n", s.CommandAt)
	}
	line := func(format string, args ...any) {
		w.WriteString("# ")
		fmt.Fprintf(w, format, args...)
		w.WriteString("\n")
	}
	line("[services.%s]", name)
	line("cmd = %s", tomlstr.Quote("TODO: the command that runs "+oneLine(s.Name)+" on the host"))
	var names []string
	if len(s.Ports) > 0 {
		names = make([]string, len(s.Ports))
		specs := make([]string, len(s.Ports))
		used := map[string]bool{}
		for i, p := range s.Ports {
			n := "http"
			if i > 0 {
				n = fmt.Sprintf("p%d", p.Container)
				if p.Container == 0 || used[n] {
					n = fmt.Sprintf("port%d", i+1)
				}
			}
			used[n] = true
			names[i] = n
			specs[i] = oneLine(p.Spec)
		}
		line("ports = %s  # compose published %s; binky allocates them ($PORT is the first)", list(names), strings.Join(specs, ", "))
		if dnsLabel(name) {
			line("url = %s  # proxied at http://%s.<worktree>.<project>.localhost", tomlstr.Quote(name), name)
		}
	}
	var deps, started []string
	for _, d := range s.DependsOn {
		n, ok := r.names[d.Service]
		if !ok {
			continue
		}
		if d.Condition == "service_healthy" {
			deps = append(deps, n)
		} else {
			started = append(started, n)
		}
	}
	if len(deps) > 0 {
		line("depends_on = %s  # service_healthy in compose", list(deps))
	}
	if len(started) > 0 {
		line("  (compose also starts it after %s, without waiting for health: add them to depends_on to wait)", strings.Join(started, ", "))
	}
	if h := s.Health; h != nil {
		if probe := healthProbe(h, s.Ports, names); probe != "" {
			line("health = %s  # from compose's healthcheck (%s), whose command is not copied", probe, h.At)
		} else {
			line("  (compose's healthcheck at %s is not copied, as it can hold a credential: write health = { exec = \"…\" })", h.At)
		}
	}
	var files []string
	for _, f := range s.EnvFiles {
		if f = strings.TrimPrefix(f, "./"); f != "" && f != r.p.EnvFile && !strings.Contains(f, "$") && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	if len(files) > 0 {
		line("env_file = %s  # compose's env_file; init read none of it", tomlstr.Quote(oneLine(files[0])))
	}
	if len(files) > 1 {
		line("  (compose also read %s: binky reads one env_file per service)", oneLine(strings.Join(files[1:], ", ")))
	}
	if envs := r.serviceEnv(s, names); len(envs) > 0 {
		line("[services.%s.env]", name)
		for _, e := range envs {
			line("%s = %s", e[0], tomlstr.Quote(e[1]))
		}
	}
	return reason
}

// serviceEnv maps a service's environment onto binky env values: a URL
// pointing at an adapter service becomes ${<svc>.url}; a value init may
// keep (EnvVar.Keep) is written as compose wrote it, each variable compose
// interpolates as ${env.VAR}; anything else is ${env.NAME}. Variables of
// env_file: .env are listed by name too. portNames are the names of the
// ports the service's block allocates.
func (r *renderer) serviceEnv(s *Service, portNames []string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for _, e := range s.Env {
		seen[e.Name] = true
		if _, ok := r.adapter[e.URLHost]; ok && e.URLHost != "" {
			n := r.names[e.URLHost]
			if e.URLDriver != "" {
				// postgresql+asyncpg://: the adapter's url would drop the
				// driver the program asks for, so the URL is built of parts.
				out = append(out, [2]string{e.Name, fmt.Sprintf("%s://${%s.user}:${%s.password}@${%s.host}:${%s.port}/${%s.database}", e.URLDriver, n, n, n, n, n)})
				continue
			}
			out = append(out, [2]string{e.Name, "${" + n + ".url}"})
			continue
		}
		if !e.Keep {
			out = append(out, [2]string{e.Name, r.env(e.Name)})
			continue
		}
		v := r.keptValue(e, s.Ports, portNames)
		if !strings.Contains(v, "${") {
			r.kept = append(r.kept, e.Name)
		}
		out = append(out, [2]string{e.Name, v})
	}
	for _, f := range s.EnvFiles {
		if strings.TrimPrefix(f, "./") != r.p.EnvFile || r.p.EnvFile == "" {
			continue
		}
		for _, k := range r.p.EnvKeys {
			if !seen[k] {
				seen[k] = true
				out = append(out, [2]string{k, r.env(k)})
			}
		}
	}
	return out
}

// keptValue writes a value init keeps. A variable compose would read with a
// default (${VAR:-text}) that .env does not define is its default, as
// compose would have used it; any other variable is ${env.VAR}. A port
// variable (…PORT) whose value is a port the service publishes is that
// port's token, since binky gives each world its own.
func (r *renderer) keptValue(e EnvVar, ports []Port, portNames []string) string {
	var b strings.Builder
	for _, p := range e.Parts {
		switch {
		case p.Var == "":
			b.WriteString(p.Lit)
		case p.HasDefault && !slices.Contains(r.p.EnvKeys, p.Var):
			b.WriteString(p.Default)
		default:
			b.WriteString(r.env(p.Var))
		}
	}
	v := b.String()
	words := splitWords(e.Name)
	last := ""
	if len(words) > 0 {
		last = words[len(words)-1]
	}
	if last == "PORT" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			for i, p := range ports {
				if p.Container == n && i < len(portNames) {
					if i == 0 {
						return "${self.port}"
					}
					return "${self.ports." + portNames[i] + "}"
				}
			}
			if svc := r.adapterNamed(words[:len(words)-1]); svc != "" {
				return "${" + svc + ".port}"
			}
		}
	}
	// The address of a server binky replaces with a slice: DB_HOST=db,
	// REDIS_ADDR=redis:6379 name the slice's host and port.
	host, port, hasPort := strings.Cut(v, ":")
	if _, ok := r.adapter[host]; ok && r.adapter[host] != "sqlite" {
		if _, err := strconv.Atoi(port); hasPort && err == nil {
			return "${" + r.names[host] + ".host}:${" + r.names[host] + ".port}"
		}
		if !hasPort && (last == "HOST" || last == "HOSTNAME" || last == "SERVER" || last == "ADDR" || slices.Contains(words, strings.ToUpper(r.adapter[host]))) {
			return "${" + r.names[host] + ".host}"
		}
	}
	return v
}

// adapterNamed returns the binky name of the one adapter service that
// the words of a variable's prefix name: by its whole name (DB for db,
// PG_MAIN for pg-main), by a word equal to its name, or by its adapter
// (POSTGRES for the one postgres service). "" when none or several do.
func (r *renderer) adapterNamed(words []string) string {
	if len(words) == 0 {
		return ""
	}
	prefix := strings.Join(words, "_")
	var found []string
	for _, s := range r.p.Services {
		a, ok := r.adapter[s.Name]
		if !ok || a == "sqlite" {
			continue
		}
		n := r.names[s.Name]
		up := strings.ToUpper(strings.ReplaceAll(n, "-", "_"))
		if up == prefix || slices.Contains(words, up) || slices.Contains(words, strings.ToUpper(a)) {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

// healthProbe derives a health probe from a compose healthcheck without
// copying its command (which can carry a credential): an http://localhost
// URL on a published port becomes an http probe of the port binky
// allocates, any other check of a service with ports a tcp probe of its
// first port. "" when the service publishes no port.
func healthProbe(h *Healthcheck, ports []Port, names []string) string {
	if len(ports) == 0 {
		return ""
	}
	interval := ""
	if d, err := time.ParseDuration(h.Interval); err == nil && d > 0 {
		interval = ", interval = " + tomlstr.Quote(d.String())
	}
	if m := localURL().FindStringSubmatch(h.Test); m != nil {
		port := 0
		if m[1] != "" {
			port, _ = strconv.Atoi(m[1])
		}
		for i, p := range ports {
			if p.Container == port || port == 0 && p.Container == 80 {
				tok := "${self.port}"
				if i > 0 {
					tok = "${self.ports." + names[i] + "}"
				}
				return "{ http = " + tomlstr.Quote("http://localhost:"+tok+m[2]) + interval + " }"
			}
		}
	}
	return "{ tcp = " + tomlstr.Quote("localhost:${self.port}") + interval + " }"
}

// oneLine keeps a compose string that goes into a comment on its line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || r == 0x85 {
			return ' '
		}
		return r
	}, s)
}

func dnsLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' || strings.HasPrefix(s, "xn--") {
		return false
	}
	return !nonName().MatchString(s)
}

func list(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlstr.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
