package world

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/dotenv"
	"github.com/binkyhq/binky/host/tokens"
	"github.com/binkyhq/binky/host/worktree"
)

// portPlan assigns each port-asking cmd service its ports from a block
// starting at lo, in file order. It returns service → port name → port, and
// the block size the config needs.
func portPlan(cfg *config.Config, lo int) (map[string]map[string]int, int) {
	plan := map[string]map[string]int{}
	next := lo
	for _, name := range cfg.Order {
		names := cfg.Services[name].PortNames()
		if len(names) == 0 {
			continue
		}
		m := map[string]int{}
		for _, pn := range names {
			m[pn] = next
			next++
		}
		plan[name] = m
	}
	return plan, next - lo
}

// portLayout lays out the ports of cfg's cmd services in the block of
// size ports from lo: each port recorded for a service keeps its number
// (a port name the service still has, inside the block, not given
// twice), then the ports not laid out yet fill the block's holes in file
// order, then extend it past its end. It returns the layout and the block
// size it needs, never less than size: a service removed leaves a hole,
// and no other service is renumbered. With nothing recorded and size 0 it
// is portPlan.
func portLayout(cfg *config.Config, lo, size int, recorded map[string]map[string]int) (map[string]map[string]int, int) {
	out := map[string]map[string]int{}
	taken := map[int]bool{}
	put := func(name, pn string, p int) {
		if out[name] == nil {
			out[name] = map[string]int{}
		}
		out[name][pn] = p
		taken[p] = true
	}
	for _, name := range cfg.Order {
		for _, pn := range cfg.Services[name].PortNames() {
			if p, ok := recorded[name][pn]; ok && p >= lo && p < lo+size && !taken[p] {
				put(name, pn, p)
			}
		}
	}
	next := lo
	for _, name := range cfg.Order {
		for _, pn := range cfg.Services[name].PortNames() {
			if _, ok := out[name][pn]; ok {
				continue
			}
			for taken[next] {
				next++
			}
			put(name, pn, next)
		}
	}
	need := size
	for p := range taken {
		need = max(need, p-lo+1)
	}
	return out, need
}

// firstPort is a service's ${self.port}.
func firstPort(cfg *config.Config, svc string, plan map[string]map[string]int) int {
	names := cfg.Services[svc].PortNames()
	if len(names) == 0 {
		return 0
	}
	return plan[svc][names[0]]
}

// slice is what an adapter service resolved to.
type slice struct {
	Address string
	Values  map[string]string
}

// world is everything tokens render from.
type world struct {
	cfg      *config.Config
	project  string
	worktree string
	path     string
	plan     map[string]map[string]int
	slices   map[string]slice
	env      map[string]string // resolved ${env.*} values
	// caller is the environment of the caller whose verb this is (its
	// whole os.Environ): the base of every process the verb starts.
	caller   map[string]string
	proxyURL func(host string) string
	hostOf   func(svc string) string
}

// coords builds the token coordinate map of a world.
func (w *world) coords() map[string]string {
	c := map[string]string{
		"worktree.name": w.worktree,
		"worktree.path": w.path,
		"project.name":  w.project,
	}
	for k, v := range w.env {
		c["env."+k] = v
	}
	for _, name := range w.cfg.Order {
		s := w.cfg.Services[name]
		if s.IsAdapter() {
			sl, ok := w.slices[name]
			if !ok {
				continue
			}
			c[name+".url"] = sl.Address
			if u, err := url.Parse(sl.Address); err == nil && u.Hostname() != "" {
				c[name+".host"] = u.Hostname()
				if u.Port() != "" {
					c[name+".port"] = u.Port()
				}
			}
			for k, v := range sl.Values {
				if _, taken := c[name+"."+k]; !taken {
					c[name+"."+k] = v
				}
			}
			continue
		}
		ports := w.plan[name]
		if len(ports) == 0 {
			continue
		}
		first := strconv.Itoa(firstPort(w.cfg, name, w.plan))
		c[name+".port"] = first
		for pn, p := range ports {
			c[name+".ports."+pn] = strconv.Itoa(p)
		}
		c[name+".host"] = "127.0.0.1"
		if s.URL != "" && w.hostOf != nil && w.proxyURL != nil {
			c[name+".url"] = w.proxyURL(w.hostOf(name))
		} else {
			c[name+".url"] = "http://localhost:" + first
		}
	}
	return c
}

// render renders s for service self: for strings that are not shell (env
// values, health URLs, admin_url), where a value is pasted in as it is.
func (w *world) render(s, self string, coords map[string]string) string {
	return tokens.Render(s, self, coords)
}

// renderCmd renders a command the platform shell runs (cmd, migrate, seed,
// an exec health check): on POSIX systems each token becomes a quoted
// reference to a variable in the returned Env, so a value is never
// executed or word-split (tokens.RenderShell).
func (w *world) renderCmd(s, self string, coords map[string]string) tokens.Shell {
	return renderShellCmd(s, self, coords)
}

// exposed is the [agents] expose set: a resource yields its address, a url
// service its proxied URL, anything else http://localhost:<port>.
func (w *world) exposed(coords map[string]string) (map[string]string, []string) {
	out := map[string]string{}
	var order []string
	for _, name := range w.cfg.Agents.Expose {
		if v, ok := coords[name+".url"]; ok {
			out[name] = v
			order = append(order, name)
		}
	}
	return out, order
}

// resolveEnv finds every ${env.NAME} the config references: the caller's
// environment first (every verb forwards it whole), then the env files
// (project, then services'). The daemon's own environment is never looked
// at: it belongs to whichever shell first started the daemon, not to the
// caller. A name found nowhere is an error naming both places.
func resolveEnv(cfg *config.Config, root string, caller map[string]string) (map[string]string, error) {
	return resolveEnvOf(cfg, cfg, root, caller)
}

// resolveEnvOf is resolveEnv for the ${env.*} names of src only (a part of
// cfg, such as its adapter services): a verb that needs only those does not
// fail on a name only a process would use.
func resolveEnvOf(src tokens.Source, cfg *config.Config, root string, caller map[string]string) (map[string]string, error) {
	names := tokens.EnvNames(src)
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	files, err := envFiles(cfg, root)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var missing []string
	for _, n := range names {
		if v, ok := caller[n]; ok {
			out[n] = v
			continue
		}
		found := false
		for _, f := range files {
			if v, ok := f.vals[n]; ok {
				out[n], found = v, true
				break
			}
		}
		if !found {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		var where []string
		for _, f := range files {
			where = append(where, f.path)
		}
		fileList := "no env_file set"
		if len(where) > 0 {
			fileList = "env_file " + strings.Join(where, ", ")
		}
		return nil, api.Errorf("invalid", "${env.%s} is not set: looked in your environment and %s (export it in the shell you run binky from, or add it to an env_file)",
			strings.Join(missing, "}, ${env."), fileList)
	}
	return out, nil
}

// addSecrets registers with the redactor the resolved ${env.*} values
// that are secrets (config.SecretEnv: a secret-looking name, a URL with a
// password, a value reaching admin_url, [project] secrets) and returns
// them, for the registry. Other values are ordinary text and stay visible.
func (e *Engine) addSecrets(cfg *config.Config, env map[string]string) []string {
	secrets := config.SecretValues(cfg, env)
	for _, v := range secrets {
		e.redact.Add(v)
	}
	return secrets
}

type envFile struct {
	path string
	vals map[string]string
}

func envFiles(cfg *config.Config, root string) ([]envFile, error) {
	var paths []string
	if cfg.Project.EnvFile != "" {
		paths = append(paths, cfg.Project.EnvFile)
	}
	seen := map[string]bool{}
	names := append([]string(nil), cfg.Order...)
	sort.Strings(names)
	for _, n := range names {
		if f := cfg.Services[n].EnvFile; f != "" {
			paths = append(paths, f)
		}
	}
	var out []envFile
	main := worktree.MainRoot(root)
	for _, p := range paths {
		p = config.EnvFilePath(p, root, main)
		if seen[p] {
			continue
		}
		seen[p] = true
		vals, err := dotenv.ReadFile(p)
		if err != nil {
			if os.IsNotExist(err) || strings.Contains(err.Error(), "no such file") {
				return nil, api.Errorf("invalid", "env_file %s does not exist, in this worktree or the main one (create it, or remove env_file from binky.toml)", p)
			}
			return nil, fmt.Errorf("read env_file: %w", err)
		}
		out = append(out, envFile{path: p, vals: vals})
	}
	return out, nil
}
