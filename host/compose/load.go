package compose

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/safefile"
	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds one compose or env file init reads.
const MaxFileSize = 4 << 20

// ErrNoCompose is returned by Load when dir holds no compose file.
var ErrNoCompose = errors.New("no compose file")

// ErrNoServices is returned by Load when the compose files define no
// service: init would write a file with nothing in it.
var ErrNoServices = errors.New("no service")

// baseNames are the compose files Load looks for, in compose's own order
// of preference; the first one found is the project's, and its
// .override twin is merged over it.
var baseNames = []string{"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"}

// Project is what init needs of a compose project.
type Project struct {
	// Name is compose's top-level name:, or "".
	Name string
	// Files are the compose files read, base first, relative to the dir.
	Files []string
	// Services in the order the base file writes them.
	Services []*Service
	// EnvFile is the .env of compose's project directory (the first
	// compose file's), relative to the directory read, when it has one;
	// EnvKeys are its key names (never its values), sorted.
	EnvFile string
	EnvKeys []string
	// V1 names the files written in compose's first format (services at
	// the top level, no services: key), which Load reads as well.
	V1 []string
	// Include is set when a file has include: (other compose files init
	// does not follow; give them with -f).
	Include bool
}

// Service is one compose service, reduced to what maps onto binky.toml.
// It holds no value of an environment variable: Env keeps names and, for
// values that are URLs, only the host they point at.
type Service struct {
	Name  string
	Image string
	// Build is set when compose builds the service from source.
	Build bool
	// CommandAt is where its command: is written (file:line), or "".
	CommandAt string
	// Ports are the published host:container pairs, as written (no
	// interpolated values).
	Ports []Port
	// Env lists the variables compose gives the container, in file order.
	Env []EnvVar
	// EnvFiles are the service's env_file paths, as written.
	EnvFiles []string
	// Health is the healthcheck, or nil.
	Health *Healthcheck
	// DependsOn lists the services it depends on with their condition
	// (service_started for the short form).
	DependsOn []Dependency
}

// Port is one published port.
type Port struct {
	Host, Container int // 0 when not a plain number
	Spec            string
}

// EnvVar is one environment entry: its name; when its value is a URL, the
// URL's host (a compose service name, usually); and the value itself only
// as far as init may write it (Parts).
type EnvVar struct {
	Name    string
	URLHost string
	// URLDriver is the URL's scheme when it names a driver after a '+'
	// (SQLAlchemy's postgresql+asyncpg, mysql+pymysql), else "".
	URLDriver      string
	HasValue       bool
	ValueFromShell bool // the value is exactly ${NAME} or $NAME: the same name from the shell or .env
	// Keep says Parts is what binky.toml may say for the variable: the
	// literal text compose wrote when neither the name nor the text is a
	// secret (secret.go), and the variables compose interpolates. When
	// Keep is false the value is a secret or has no binky form, Parts is
	// nil, and binky.toml reads ${env.Name}.
	Keep  bool
	Parts []Part
}

// Healthcheck is a service's healthcheck: Test is the command when it was
// written as a CMD / CMD-SHELL / string, "" for NONE or disable.
type Healthcheck struct {
	Test     string
	Interval string
	At       string // file:line
}

// Dependency is one depends_on entry.
type Dependency struct {
	Service, Condition string
}

// Find returns the compose files of dir: the base file and its override,
// when it has one.
func Find(dir string) ([]string, error) {
	for _, b := range baseNames {
		if _, err := os.Stat(filepath.Join(dir, b)); err == nil {
			files := []string{b}
			ext := filepath.Ext(b)
			ov := strings.TrimSuffix(b, ext) + ".override" + ext
			if _, err := os.Stat(filepath.Join(dir, ov)); err == nil {
				files = append(files, ov)
			}
			return files, nil
		}
	}
	return nil, fmt.Errorf("%w in %s (looked for %s): run binky init where the compose file is, or write binky.toml by hand (docs/config.md)", ErrNoCompose, dir, strings.Join(baseNames, ", "))
}

// Load reads the compose files of dir (Find) and the key names of
// dir/.env. files, when given, are read instead of Find's (later files
// override earlier ones, as compose -f does).
func Load(dir string, files ...string) (*Project, error) {
	if len(files) == 0 {
		var err error
		if files, err = Find(dir); err != nil {
			return nil, err
		}
	}
	p := &Project{Files: files}
	byName := map[string]*Service{}
	for _, f := range files {
		data, err := readLimited(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("read compose file %s: %w", f, err)
		}
		if err := p.merge(f, data, byName); err != nil {
			return nil, err
		}
	}
	if len(p.Services) == 0 {
		hint := "init writes a binky.toml only from a project that defines its services"
		if p.Include {
			hint = "init does not follow include:; name the included files with -f"
		}
		return nil, fmt.Errorf("%w in %s: it has no services: mapping with a service in it (nor, as compose's first format, services at the top level with an image: or build:); %s", ErrNoServices, strings.Join(files, " and "), hint)
	}
	// Compose resolves env_file, and reads .env, in the project directory:
	// the first compose file's. binky resolves them in the worktree (the
	// directory init writes binky.toml in), so they are written from there.
	base := filepath.ToSlash(filepath.Dir(files[0]))
	for _, s := range p.Services {
		for i, f := range s.EnvFiles {
			s.EnvFiles[i] = rebase(base, f)
		}
	}
	envFile := rebase(base, ".env")
	if keys, err := EnvKeys(filepath.Join(dir, filepath.FromSlash(envFile))); err == nil {
		p.EnvFile, p.EnvKeys = envFile, keys
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the key names of %s: %w", envFile, err)
	}
	return p, nil
}

// rebase is path f, relative to compose's project directory base, made
// relative to the directory init runs in; an absolute path, or one that
// names a variable, stays as written.
func rebase(base, f string) string {
	if f == "" || strings.Contains(f, "$") || path.IsAbs(f) || filepath.IsAbs(f) {
		return f
	}
	return path.Join(base, f)
}

func readLimited(path string) ([]byte, error) {
	// A FIFO, a device or a file past the bound is refused by name,
	// without blocking and without reading more than the bound.
	return safefile.ReadRegular(path, MaxFileSize)
}

// EnvKeys returns the variable names an env file defines, sorted; values
// are read past and dropped.
func EnvKeys(path string) ([]string, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), MaxFileSize)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		line = strings.TrimPrefix(line, "export ")
		if line == "" || line[0] == '#' {
			continue
		}
		name, _, _ := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if validEnvName(name) {
			seen[name] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// merge folds one compose file into p: services new to it are appended in
// file order, services it already has are overridden key by key.
func (p *Project) merge(file string, data []byte, byName map[string]*Service) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("parse compose file %s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("parse compose file %s: the top level is not a mapping", file)
	}
	service := func(name string, body *yaml.Node) error {
		s := byName[name]
		if s == nil {
			s = &Service{Name: name}
			byName[name] = s
			p.Services = append(p.Services, s)
		}
		return s.merge(file, body)
	}
	// version: "2" and "3" files have the keys of today's format (compose
	// ignores version: now); only the first format, with no services: and
	// no version:, puts the services at the top level.
	hasServices, hasVersion := false, false
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "services":
			hasServices = true
		case "version":
			hasVersion = true
		case "include":
			p.Include = true
		}
	}
	if !hasServices && !hasVersion {
		return p.mergeV1(file, root, service)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "name":
			if v.Kind == yaml.ScalarNode && !strings.Contains(v.Value, "$") {
				p.Name = v.Value
			}
		case "services":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				continue // services: with nothing under it
			}
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("parse compose file %s:%d: services is not a mapping", file, v.Line)
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				if err := service(v.Content[j].Value, v.Content[j+1]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// topLevelKeys are the keys of today's format that are not services.
var topLevelKeys = []string{"name", "version", "services", "volumes", "networks", "configs", "secrets", "include", "models"}

// mergeV1 reads a file of compose's first format: each top-level mapping
// with an image: or a build: is a service. Other keys are left alone, so
// a file of today's format that merely lacks services: yields nothing.
func (p *Project) mergeV1(file string, root *yaml.Node, service func(string, *yaml.Node) error) error {
	found := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if v.Kind != yaml.MappingNode || strings.HasPrefix(k.Value, "x-") || slices.Contains(topLevelKeys, k.Value) {
			continue
		}
		isService := false
		for j := 0; j+1 < len(v.Content); j += 2 {
			if key := v.Content[j].Value; key == "image" || key == "build" {
				isService = true
			}
		}
		if !isService {
			continue
		}
		found = true
		if err := service(k.Value, v); err != nil {
			return err
		}
	}
	if found {
		p.V1 = append(p.V1, file)
	}
	return nil
}

// merge applies one compose service body over s.
func (s *Service) merge(file string, body *yaml.Node) error {
	var m map[string]yaml.Node
	if err := body.Decode(&m); err != nil {
		return fmt.Errorf("parse compose file %s:%d: service %s: %w", file, body.Line, s.Name, err)
	}
	if n, ok := m["image"]; ok {
		s.Image = n.Value
	}
	if _, ok := m["build"]; ok {
		s.Build = true
	}
	if n, ok := m["command"]; ok {
		s.CommandAt = fmt.Sprintf("%s:%d", file, n.Line)
	}
	if n, ok := m["ports"]; ok {
		for _, e := range seq(&n) {
			s.Ports = append(s.Ports, port(e))
		}
	}
	if n, ok := m["environment"]; ok {
		for _, e := range envEntries(&n) {
			if i := slices.IndexFunc(s.Env, func(x EnvVar) bool { return x.Name == e.Name }); i >= 0 {
				s.Env[i] = e
			} else {
				s.Env = append(s.Env, e)
			}
		}
	}
	if n, ok := m["env_file"]; ok {
		s.EnvFiles = nil
		for _, e := range seq(&n) {
			switch e.Kind {
			case yaml.ScalarNode:
				s.EnvFiles = append(s.EnvFiles, e.Value)
			case yaml.MappingNode:
				var ef struct {
					Path string `yaml:"path"`
				}
				if e.Decode(&ef) == nil && ef.Path != "" {
					s.EnvFiles = append(s.EnvFiles, ef.Path)
				}
			}
		}
	}
	if n, ok := m["healthcheck"]; ok {
		s.Health = healthcheck(&n)
		if s.Health != nil {
			s.Health.At = fmt.Sprintf("%s:%d", file, n.Line)
		}
	}
	if n, ok := m["depends_on"]; ok {
		s.DependsOn = nil
		switch n.Kind {
		case yaml.SequenceNode:
			for _, e := range n.Content {
				s.DependsOn = append(s.DependsOn, Dependency{Service: e.Value, Condition: "service_started"})
			}
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				dep := Dependency{Service: n.Content[j].Value, Condition: "service_started"}
				var c struct {
					Condition string `yaml:"condition"`
				}
				if n.Content[j+1].Decode(&c) == nil && c.Condition != "" {
					dep.Condition = c.Condition
				}
				s.DependsOn = append(s.DependsOn, dep)
			}
		}
	}
	if n, ok := m["links"]; ok {
		// links (the first format's way to order services, still
		// accepted) start the named service first: service_started.
		for _, e := range seq(&n) {
			name, _, _ := strings.Cut(e.Value, ":")
			if name != "" && !slices.ContainsFunc(s.DependsOn, func(d Dependency) bool { return d.Service == name }) {
				s.DependsOn = append(s.DependsOn, Dependency{Service: name, Condition: "service_started"})
			}
		}
	}
	return nil
}

// seq returns n's elements, or n itself when it is a single value.
func seq(n *yaml.Node) []*yaml.Node {
	if n.Kind == yaml.SequenceNode {
		return n.Content
	}
	return []*yaml.Node{n}
}

// port reads "8080:80", "127.0.0.1:8080:80/tcp", 5432 or the long form.
func port(n *yaml.Node) Port {
	if n.Kind == yaml.MappingNode {
		var lf struct {
			Target    string `yaml:"target"`
			Published string `yaml:"published"`
		}
		_ = n.Decode(&lf)
		p := Port{Spec: lf.Published + ":" + lf.Target}
		p.Host, _ = strconv.Atoi(lf.Published)
		p.Container, _ = strconv.Atoi(lf.Target)
		return p
	}
	spec := n.Value
	p := Port{Spec: spec}
	s, _, _ := strings.Cut(spec, "/")
	parts := strings.Split(s, ":")
	p.Container, _ = strconv.Atoi(parts[len(parts)-1])
	if len(parts) >= 2 {
		p.Host, _ = strconv.Atoi(parts[len(parts)-2])
	}
	return p
}

// envEntries reads environment: as a mapping (merge keys <<: *anchor
// included, the mapping's own keys winning) or a list of NAME=value,
// keeping names, the host of URL values and what keepParts allows of the
// value.
func envEntries(n *yaml.Node) []EnvVar {
	var out []EnvVar
	add := func(name, value string, has, scalar bool) {
		if !validEnvName(name) {
			return
		}
		e := EnvVar{Name: name, HasValue: has}
		if has && scalar {
			e.URLHost = urlHost(withDefaults(value))
			if e.URLHost != "" {
				e.URLDriver = urlDriver(withDefaults(value))
			}
			e.ValueFromShell = value == "${"+name+"}" || value == "$"+name
			e.Parts = keepParts(name, value)
			e.Keep = e.Parts != nil
		}
		if i := slices.IndexFunc(out, func(x EnvVar) bool { return x.Name == name }); i >= 0 {
			out[i] = e
		} else {
			out = append(out, e)
		}
	}
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		n = deref(n)
		if n == nil || depth > 8 {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			// Merged mappings first, so the keys written here win.
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == "<<" && n.Content[j].Tag == "!!merge" {
					for _, m := range seq(deref(n.Content[j+1])) {
						walk(m, depth+1)
					}
				}
			}
			for j := 0; j+1 < len(n.Content); j += 2 {
				k, v := n.Content[j], deref(n.Content[j+1])
				if k.Value == "<<" && k.Tag == "!!merge" || v == nil {
					continue
				}
				has := !(v.Kind == yaml.ScalarNode && v.Tag == "!!null")
				add(k.Value, v.Value, has, v.Kind == yaml.ScalarNode)
			}
		case yaml.SequenceNode:
			for _, e := range n.Content {
				if e = deref(e); e == nil || e.Kind != yaml.ScalarNode {
					continue
				}
				name, value, has := strings.Cut(e.Value, "=")
				add(name, value, has, true)
			}
		}
	}
	walk(n, 0)
	return out
}

// deref follows an alias (*anchor) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// withDefaults returns v with each ${VAR:-default} as its default and
// other variables dropped, so the host of
// postgres://${PGHOST:-db}:5432/app is found.
func withDefaults(v string) string {
	parts, ok := parseValue(v)
	if !ok {
		return v
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Lit)
		if p.HasDefault {
			b.WriteString(p.Default)
		}
	}
	return b.String()
}

// urlHost returns the host of a scheme://[user[:pass]@]host[:port]/… value,
// or "". Only the host is kept; credentials never leave this function.
func urlHost(v string) string {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "${}") {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	host := rest
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	return host
}

// urlDriver is the scheme of a URL value when it names a driver
// (engine+driver://…), else "".
func urlDriver(v string) string {
	scheme, _, ok := strings.Cut(v, "://")
	engine, driver, plus := strings.Cut(scheme, "+")
	if !ok || !plus || engine == "" || driver == "" || !schemeChars.MatchString(scheme) {
		return ""
	}
	return scheme
}

var schemeChars = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// healthcheck reads test: as CMD / CMD-SHELL / NONE or a string.
func healthcheck(n *yaml.Node) *Healthcheck {
	var hc struct {
		Test     yaml.Node `yaml:"test"`
		Interval string    `yaml:"interval"`
		Disable  bool      `yaml:"disable"`
	}
	if err := n.Decode(&hc); err != nil || hc.Disable {
		return nil
	}
	h := &Healthcheck{Interval: hc.Interval}
	switch hc.Test.Kind {
	case yaml.ScalarNode:
		h.Test = hc.Test.Value
	case yaml.SequenceNode:
		var args []string
		for _, e := range hc.Test.Content {
			args = append(args, e.Value)
		}
		if len(args) == 0 {
			return nil
		}
		switch args[0] {
		case "NONE":
			return nil
		case "CMD-SHELL":
			h.Test = strings.Join(args[1:], " ")
		case "CMD":
			h.Test = shellJoin(args[1:])
		default:
			h.Test = shellJoin(args)
		}
	}
	if h.Test == "" {
		return nil
	}
	return h
}

// shellJoin quotes args for sh where they need it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
