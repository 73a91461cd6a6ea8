package config

import (
	"fmt"
	"slices"
	"strings"
)

// reserved service names collide with token namespaces.
var reserved = []string{"self", "env", "worktree", "project"}

// validate applies the rules that span services.
func validate(d *decoder, c *Config) {
	urls := map[string]string{}
	for _, name := range c.Order {
		s := c.Services[name]
		path := []string{"services", name}
		switch {
		case !serviceNameRE().MatchString(name):
			d.errorf(path, "a service name is letters, digits, _ and -; it is used in ${<name>.url} tokens", "service name %s is not valid", quote(name))
		case slices.Contains(reserved, name):
			d.errorf(path, "self, env, worktree and project are token namespaces: rename the service", "service name %s is reserved", quote(name))
		}
		if s.URL != "" && !s.IsAdapter() {
			if other, dup := urls[s.URL]; dup {
				d.errorf(join(path, "url"), "give each service its own hostname label", "url %s is already used by services.%s", quote(s.URL), other)
			} else {
				urls[s.URL] = name
			}
		}
		seen := map[string]bool{}
		for i, dep := range s.DependsOn {
			ep := join(path, "depends_on", elem(i))
			switch {
			case dep == name:
				d.errorf(ep, "remove it: a service cannot wait for itself", "services.%s depends on itself", name)
			case c.Services[dep] == nil:
				d.errorf(ep, didYouMean(dep, c.Order, "depends_on lists service names: "+nameList(c.Order)), "services.%s depends on %s, which is not a service", name, quote(dep))
			case seen[dep]:
				d.warnf(ep, "remove the duplicate", "services.%s lists %s twice in depends_on", name, quote(dep))
			}
			seen[dep] = true
		}
	}
	cycles(d, c)
	checkWake(d, c)
	checkProfiles(d, c)
	seen := map[string]bool{}
	for i, name := range c.Agents.Expose {
		ep := []string{"agents", "expose", elem(i)}
		switch {
		case c.Services[name] == nil:
			d.errorf(ep, didYouMean(name, c.Order, "expose lists service names, not fields: "+nameList(c.Order)), "agents.expose names %s, which is not a service", quote(name))
		case seen[name]:
			d.warnf(ep, "remove the duplicate", "agents.expose lists %s twice", quote(name))
		case !c.Services[name].IsAdapter() && len(c.Services[name].PortNames()) == 0:
			d.warnf(ep, fmt.Sprintf("give services.%s ports or a url, or remove it from expose", name),
				"agents.expose names %s, which has no address (a cmd service with neither ports nor url): binky env would leave it out", quote(name))
		}
		seen[name] = true
	}
	if len(c.Project.Secrets) > 0 {
		used := c.EnvNames()
		for _, n := range c.Project.Secrets {
			if !slices.Contains(used, n) {
				d.warnf([]string{"project", "secrets"}, didYouMean(n, used, "list the NAME of a ${env.NAME} this file uses"),
					"project.secrets names %s, which no ${env.%s} token reads", n, n)
			}
		}
	}
	if _, ok := d.raw["services"]; !ok {
		d.warnf([]string{"services"}, `add a [services.<name>] table with cmd or adapter`, "no services: binky up would start nothing")
	}
	if r := c.Project.PortRange; r[1] > 0 {
		need := 0
		for _, name := range c.Order {
			need += len(c.Services[name].PortNames())
		}
		if have := r[1] - r[0] + 1; have < need {
			d.warnf([]string{"project", "port_range"}, "widen the range", "project.port_range holds %d ports but one worktree needs %d", have, need)
		}
	}
}

func nameList(names []string) string {
	if len(names) == 0 {
		return "there are none"
	}
	return strings.Join(names, ", ")
}

// cycles reports each depends_on cycle once, as "a -> b -> a".
func cycles(d *decoder, c *Config) {
	const (
		unvisited = iota
		active
		finished
	)
	state := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		state[name] = active
		stack = append(stack, name)
		for _, dep := range c.Services[name].DependsOn {
			if dep == name || c.Services[dep] == nil {
				continue // reported elsewhere
			}
			switch state[dep] {
			case unvisited:
				visit(dep)
			case active:
				i := slices.Index(stack, dep)
				cyc := slices.Clone(stack[i:])
				if key := cycleKey(cyc); !reported[key] {
					reported[key] = true
					first := cyc[0]
					at := []string{"services", first, "depends_on", elem(slices.Index(c.Services[first].DependsOn, next(cyc, 0)))}
					d.errorf(at, "remove one of these dependencies", "depends_on cycle: %s -> %s", strings.Join(cyc, " -> "), cyc[0])
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = finished
	}
	for _, name := range c.Order {
		if state[name] == unvisited {
			visit(name)
		}
	}
}

func next(cyc []string, i int) string { return cyc[(i+1)%len(cyc)] }

// cycleKey names a cycle independently of where it was entered.
func cycleKey(cyc []string) string {
	m := 0
	for i := range cyc {
		if cyc[i] < cyc[m] {
			m = i
		}
	}
	rot := append(slices.Clone(cyc[m:]), cyc[:m]...)
	return fmt.Sprint(rot)
}
