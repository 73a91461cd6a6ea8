package config

import (
	"slices"

	"github.com/binkyhq/binky/host/tokens"
)

// goldenPerWorld warns when a value that enters the golden template key
// of a clone_from service would render differently in each world: then
// every worktree builds (and keeps, up to golden_keep) a template of its
// own, and a template is built on every up of a new worktree.
//
// The key renders the service's env and its config's top-level strings
// with every token but the service's own (${self.*}, ${<svc>.*}) and the
// worktree's (${worktree.*}), which stay as written (host/golden,
// TemplateCoords). What still differs per world is another service's
// port, url, host or slice value (${web.port}, ${cache.url}). migrate,
// seed and inputs enter as written, so no token in them splits the key.
// When admin_url itself names such a value (a server run per world),
// every world has its own server and its own template anyway.
func goldenPerWorld(d *decoder, c *Config, s *Service) {
	if s.CloneFrom == "" || len(perWorldRefs(c, s, s.AdminURL)) > 0 {
		return
	}
	p := []string{"services", s.Name}
	warn := func(path []string, v string) {
		for _, ref := range perWorldRefs(c, s, v) {
			d.warnf(path, "keep other services' values out of a clone_from service's env and config, so every worktree shares one template, or drop clone_from",
				"${%s} in %s differs in each world and enters the golden key of services.%s: every worktree would build its own template", ref, keyName(path), s.Name)
		}
	}
	for _, k := range sortedKeys(s.Env) {
		warn(join(p, "env", k), s.Env[k])
	}
	for _, k := range sortedKeys(s.Config) {
		if v, ok := s.Config[k].(string); ok {
			warn(join(p, "config", k), v)
		}
	}
}

// perWorldRefs lists the tokens of v that render to a value of another
// service of c than s, once each in order: a port, url or host of a cmd
// service that has ports, or an adapter service's slice.
func perWorldRefs(c *Config, s *Service, v string) []string {
	var out []string
	for _, ref := range tokens.Refs(v) {
		segs := tokens.Split(ref)
		other := c.Services[segs[0]]
		if len(segs) < 2 || other == nil || other == s || slices.Contains(out, ref) {
			continue
		}
		if other.IsAdapter() || len(other.PortNames()) > 0 {
			out = append(out, ref)
		}
	}
	return out
}
