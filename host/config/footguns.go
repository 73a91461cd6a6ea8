package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/binkyhq/binky/host/tokens"
)

// located is one string value of the config and the key it is written at.
type located struct {
	path  []string
	value string
}

// serviceStrings lists every string of a service that tokens expand in,
// in a stable order.
func serviceStrings(s *Service) []located {
	p := []string{"services", s.Name}
	var out []located
	add := func(v string, key ...string) {
		if v != "" {
			out = append(out, located{join(p, key...), v})
		}
	}
	add(s.Cmd, "cmd")
	add(s.Adapter, "adapter")
	add(s.Cwd, "cwd")
	add(s.EnvFile, "env_file")
	for _, k := range sortedKeys(s.Env) {
		add(s.Env[k], "env", k)
	}
	if h := s.Health; h != nil {
		add(h.HTTP, "health", "http")
		add(h.TCP, "health", "tcp")
		add(h.Exec, "health", "exec")
	}
	for i, w := range s.Watch {
		add(w, "watch", elem(i))
	}
	add(s.AdminURL, "admin_url")
	add(s.Migrate, "migrate")
	add(s.Seed, "seed")
	walkAny(s.Config, join(p, "config"), func(path []string, v string) {
		// Keys nested past maxDepth have no position of their own: keep
		// the top of the path and the last key, so deep input stays linear.
		if len(path) > maxDepth+4 {
			path = append(slices.Clone(path[:maxDepth+3]), path[len(path)-1])
		} else {
			path = slices.Clone(path)
		}
		out = append(out, located{path, v})
	})
	return out
}

// walkAny calls fn for every string inside v (tables and arrays, keys in
// sorted order). path is used as a stack: fn must clone it to keep it.
func walkAny(v any, path []string, fn func(path []string, s string)) {
	n := len(path)
	switch x := v.(type) {
	case string:
		fn(path, x)
	case map[string]any:
		for _, k := range sortedKeys(x) {
			walkAny(x[k], append(path[:n], k), fn)
		}
	case []any:
		for i, e := range x {
			walkAny(e, append(path[:n], elem(i)), fn)
		}
	case []map[string]any:
		for i, e := range x {
			walkAny(e, append(path[:n], elem(i)), fn)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TokenStrings returns every string of the config that tokens may appear
// in: project paths, each service's strings (cmd, env values, health,
// admin_url, migrate, seed, config…) and agents.verify.
func (c *Config) TokenStrings() []string {
	out := []string{c.Project.EnvFile, c.Project.WorktreeDir}
	for _, name := range c.Order {
		for _, l := range serviceStrings(c.Services[name]) {
			out = append(out, l.value)
		}
	}
	out = append(out, c.Agents.Verify...)
	return append(out, c.Worktree.Setup...)
}

// EnvNames returns every NAME of a ${env.NAME} token anywhere in the
// config, sorted and unique (tokens.EnvNames(c) is the same).
func (c *Config) EnvNames() []string { return tokens.EnvNames(c) }

// footguns warns about configs that work but will not do what was meant,
// and rejects literal credentials where binky itself would use them.
func footguns(d *decoder, c *Config) {
	for _, name := range c.Order {
		s := c.Services[name]
		strs := serviceStrings(s)
		for _, l := range strs {
			for _, ref := range tokens.Refs(l.value) {
				checkRef(d, c, s, l.path, ref)
			}
			credentials(d, s, l)
		}
		if s.IsAdapter() {
			adminURL(d, s)
			sliceTarget(d, s, "migrate", s.Migrate)
			sliceTarget(d, s, "seed", s.Seed)
			goldenInputs(d, s)
			goldenPerWorld(d, c, s)
		}
	}
	for i, v := range c.Agents.Verify {
		for _, ref := range tokens.Refs(v) {
			checkRef(d, c, nil, []string{"agents", "verify", elem(i)}, ref)
		}
	}
}

// credentials checks one string for a secret written in the file.
func credentials(d *decoder, s *Service, l located) {
	key := l.path[2]
	last := l.path[len(l.path)-1]
	cred := literalCredential(l.value)
	const fix = "put it in the environment or the [project] env_file and write ${env.NAME}"
	switch {
	case key == "admin_url" && cred != "":
		d.errorf(l.path, "write admin_url = \"${env."+strings.ToUpper(s.Name)+"_ADMIN_URL}\" and export that variable, or keep it in the env_file",
			"admin_url holds a literal credential (%s)", cred)
	case key == "config" && cred != "":
		d.errorf(l.path, fix, "%s holds a literal credential (%s)", keyName(l.path), cred)
	case key == "config" && secretName(last) && isLiteral(l.value):
		d.errorf(l.path, fix, "%s holds a literal secret", keyName(l.path))
	case key == "env" && secretName(last) && isLiteral(l.value):
		d.warnf(l.path, fix, "env %s looks like a literal secret", last)
	case cred != "":
		d.warnf(l.path, fix, "%s holds a literal credential (%s)", keyName(l.path), cred)
	}
}

// reachesServer reports whether adapter is one of binky's own adapters
// that reach their server through admin_url: every one of ProductAdapters
// but sqlite, which keeps its slices in files. Another adapter says what
// it needs when it is called.
func reachesServer(adapter string) bool {
	return adapter != "sqlite" && slices.Contains(ProductAdapters, adapter)
}

// adminURL rejects an adapter service of a server adapter with no
// admin_url: its every call would fail, and binky up would only find out
// after it had started the services before it.
func adminURL(d *decoder, s *Service) {
	if s.AdminURL != "" || s.Cmd != "" || !reachesServer(s.Adapter) {
		return
	}
	d.errorf([]string{"services", s.Name, "adapter"}, "add admin_url = \"${env."+strings.ToUpper(s.Name)+"_ADMIN_URL}\" and export that variable, or keep it in the env_file; docs/adapters.md shows each adapter's URL",
		"services.%s has no admin_url, and adapter %s reaches its server through it", s.Name, quote(s.Adapter))
}

// goldenInputs warns when a golden template is built by migrate or seed
// but keyed by nothing they read: every branch would clone the schema of
// whichever branch built the template first.
func goldenInputs(d *decoder, s *Service) {
	if s.CloneFrom == "" || (s.Migrate == "" && s.Seed == "") || s.Inputs != nil {
		return
	}
	d.warnf([]string{"services", s.Name, "clone_from"}, `list the files migrate and seed read, e.g. inputs = ["db/migrations/**", "db/seed.sql"], so each branch gets a template of its own schema`,
		"services.%s clones a template that cannot follow the branch: it has migrate or seed but no inputs", s.Name)
}

// sliceTarget warns when a migrate or seed cannot know which slice to
// fill: neither it nor the service's env names one of the slice's
// coordinates. The whole address (${self.url}) and its parts
// (${self.database}, ${self.host}, ${self.port}, ${self.user}…) both do.
func sliceTarget(d *decoder, s *Service, key, cmd string) {
	if cmd == "" || usesSlice(cmd, s.Name) {
		return
	}
	for _, v := range s.Env {
		if usesSlice(v, s.Name) {
			return
		}
	}
	d.warnf([]string{"services", s.Name, key}, `pass the slice through ${self.url}, e.g. env = { DATABASE_URL = "${self.url}" }, or through its parts: ${self.host}, ${self.port}, ${self.database}…`,
		"%s of services.%s cannot know which slice it targets: neither it nor env uses a token of the slice such as ${self.url} or ${self.database}", key, s.Name)
}

// usesSlice reports whether v has a token of the slice of service name:
// ${self.<field>} or ${<name>.<field>}.
func usesSlice(v, name string) bool {
	for _, r := range tokens.Refs(v) {
		segs := tokens.Split(r)
		if len(segs) >= 2 && (segs[0] == tokens.Self || segs[0] == name) {
			return true
		}
	}
	return false
}

// checkRef warns about a token that will not render as meant. self is the
// service the string belongs to, nil outside services.
func checkRef(d *decoder, c *Config, self *Service, path []string, ref string) {
	segs := tokens.Split(ref)
	tok := "${" + ref + "}"
	switch segs[0] {
	case tokens.Env:
		if len(segs) != 2 || !envNameRE().MatchString(segs[1]) {
			d.warnf(path, "write ${env.NAME} with a variable name", "%s is not an env token and is left as written", tok)
		}
		return
	case "worktree":
		if ref != tokens.WorktreeName && ref != tokens.WorktreePath {
			d.errorf(path, didYouMean(ref, []string{tokens.WorktreeName, tokens.WorktreePath}, "use ${worktree.name} or ${worktree.path}"), "%s is not a token: worktree has name and path", tok)
		}
		return
	case "project":
		if ref != tokens.ProjectName {
			d.errorf(path, didYouMean(ref, []string{tokens.ProjectName}, "use ${project.name}"), "%s is not a token: project has name", tok)
		}
		return
	case tokens.Self:
		if self == nil {
			d.warnf(path, "name the service: ${<service>.url}", "%s means nothing outside a service and is left as written", tok)
			return
		}
		if len(segs) > 1 {
			checkField(d, self, true, path, tok, segs[1:])
		}
		return
	}
	target := c.Services[segs[0]]
	if target == nil {
		if len(segs) >= 2 && slices.Contains([]string{tokens.FieldPort, tokens.FieldPorts, tokens.FieldURL, tokens.FieldHost}, segs[1]) {
			d.warnf(path, didYouMean(segs[0], c.Order, "name a service of this file"), "%s names no service and is left as written", tok)
		}
		return
	}
	if len(segs) > 1 {
		checkField(d, target, self == target, path, tok, segs[1:])
	}
}

// checkField checks the field part of a service token (port, ports.x…).
// A field the service does not have is an error with the nearest field:
// binky would otherwise hand the service the literal text. For an adapter
// service the fields are url, port, host and the adapter's values
// (AdapterValues); a third-party adapter's values are not known before it
// answers, so there an unknown field is an error only when it is a likely
// typo of a known one, and a warning otherwise.
func checkField(d *decoder, s *Service, isSelf bool, path []string, tok string, field []string) {
	who := "services." + s.Name
	ports := s.PortNames()
	askHint := fmt.Sprintf(`if %s needs a port, say so: url = "%s" or ports = ["http"]`, who, s.Name)
	switch field[0] {
	case tokens.FieldPort, tokens.FieldPorts:
		switch {
		case s.IsAdapter() && field[0] == tokens.FieldPort:
			// The port of the adapter's address, when it has one.
		case s.IsAdapter():
			d.errorf(path, "an adapter slice has no named ports: use ${"+refName(isSelf, s)+".url}, or ${"+refName(isSelf, s)+".port} for its address's port", "%s: %s is an adapter slice and has no ports.<name>", tok, who)
		case len(ports) == 0:
			d.warnf(path, askHint, "%s: %s asks for no port, so the token is left as written", tok, who)
		case field[0] == tokens.FieldPorts && len(field) != 2:
			d.errorf(path, "write ${"+refName(isSelf, s)+".ports.<name>}", "%s is not a token: %s has ports.<name>", tok, who)
		case field[0] == tokens.FieldPort && len(field) != 1:
			d.errorf(path, "write ${"+refName(isSelf, s)+".port}", "%s is not a token: %s has port", tok, who)
		case field[0] == tokens.FieldPorts && !slices.Contains(ports, field[1]):
			d.errorf(path, didYouMean(field[1], ports, "its ports are "+strings.Join(ports, ", ")), "%s: %s has no port named %s", tok, who, quote(field[1]))
		}
	case tokens.FieldURL, tokens.FieldHost:
		if !s.IsAdapter() && len(ports) == 0 {
			d.warnf(path, askHint, "%s: %s asks for no port, so it has no %s; the token is left as written", tok, who, field[0])
		}
	default:
		name := strings.Join(field, ".")
		if !s.IsAdapter() {
			fields := []string{tokens.FieldPort, tokens.FieldURL, tokens.FieldHost}
			for _, p := range ports {
				fields = append(fields, tokens.FieldPorts+"."+p)
			}
			d.errorf(path, didYouMean(name, fields, "a cmd service has port, ports.<name>, url and host"), "%s: %s has no field %s", tok, who, quote(name))
			return
		}
		known, sure := AdapterValues(s.Adapter)
		if slices.Contains(known, name) {
			return
		}
		fields := append([]string{tokens.FieldURL}, known...)
		hint := didYouMean(name, fields, "its fields are "+strings.Join(fields, ", "))
		switch {
		case sure || suggest(name, fields) != "":
			d.errorf(path, hint, "%s: %s (adapter %s) has no field %s", tok, who, s.Adapter, quote(name))
		default:
			d.warnf(path, "binky knows "+strings.Join(fields, ", ")+"; a value adapter "+s.Adapter+" does not return stays as written",
				"%s: %s (adapter %s) may have no field %s", tok, who, s.Adapter, quote(name))
		}
	}
}

func refName(isSelf bool, s *Service) string {
	if isSelf {
		return tokens.Self
	}
	return s.Name
}

// EnvNames is c.EnvNames().
func EnvNames(c *Config) []string { return c.EnvNames() }

// ProductAdapters are the adapter names Binky's own adapters answer to
// (names and aliases), known to `binky check` even before their binaries
// are installed.
var ProductAdapters = []string{
	"postgres", "postgresql", "mysql", "mariadb", "percona", "redis", "valkey",
	"mongodb", "s3", "minio", "kafka", "redpanda", "rabbitmq", "clickhouse",
	"elasticsearch", "opensearch", "qdrant", "sqlite",
}

// CheckAdapterNames warns, at its line, about each adapter service whose
// adapter no known name answers to (known: the names and aliases of the
// discovered adapters; ProductAdapters are always known), with the nearest
// known name: `adapter = "postgress"` is a typo binky up would only report
// once it tried to reach the adapter. src is the file's text, for
// positions; name is the file name diagnostics carry.
func CheckAdapterNames(name, src string, cfg *Config, known []string) Diagnostics {
	if cfg == nil {
		return nil
	}
	all := append(slices.Clone(ProductAdapters), known...)
	slices.Sort(all)
	all = slices.Compact(all)
	d := &decoder{file: name, pos: indexPositions(stripBOM(src))}
	for _, svcName := range cfg.Order {
		s := cfg.Services[svcName]
		if s == nil || !s.IsAdapter() || strings.Contains(s.Adapter, "${") || slices.Contains(all, s.Adapter) {
			continue
		}
		hint := didYouMean(s.Adapter, all, "binky adapters lists the installed adapters; install binky-adapter-"+s.Adapter+" or fix the name")
		d.warnf([]string{"services", svcName, "adapter"}, hint, "services.%s uses adapter %s, which no known adapter answers to", svcName, quote(s.Adapter))
	}
	return d.diags
}
