package config

import (
	"fmt"
	"slices"
)

// profileKeys are the keys of a [profiles.<name>] table.
var profileKeys = []string{"services"}

// profiles decodes the [profiles] table: each [profiles.<name>] names the
// services `binky up --profile <name>` runs (their dependencies follow).
// Service names are checked once every service is known (checkProfiles).
func (d *decoder) profiles(c *Config, m map[string]any) {
	for _, name := range d.keysInOrder([]string{"profiles"}, m) {
		path := []string{"profiles", name}
		pm, ok := d.table(m[name], path, fmt.Sprintf(`write [%s] with services = ["…"]`, keyName(path)))
		if !ok {
			continue
		}
		if !serviceNameRE().MatchString(name) {
			d.errorf(path, "a profile name is letters, digits, _ and -: binky up --profile <name>", "profile name %s is not valid", quote(name))
		}
		var list []string
		for _, k := range d.keysInOrder(path, pm) {
			kp := join(path, k)
			switch k {
			case "services":
				list, _ = d.strList(pm[k], kp)
			default:
				d.unknown(path, k, profileKeys, "["+keyName(path)+"]")
			}
		}
		if _, ok := pm["services"]; !ok {
			d.errorf(path, `add services = ["…"] naming the services this profile runs`, "%s has no services", keyName(path))
		}
		if c.Profiles == nil {
			c.Profiles = map[string][]string{}
		}
		c.Profiles[name] = list
	}
}

// checkProfiles reports each profile entry that names no service, and
// duplicates.
func checkProfiles(d *decoder, c *Config) {
	for _, name := range c.ProfileNames() {
		list := c.Profiles[name]
		seen := map[string]bool{}
		for i, svc := range list {
			ep := []string{"profiles", name, "services", elem(i)}
			switch {
			case c.Services[svc] == nil:
				d.errorf(ep, didYouMean(svc, c.Order, "a profile lists service names: "+nameList(c.Order)),
					"profiles.%s names %s, which is not a service", name, quote(svc))
			case seen[svc]:
				d.warnf(ep, "remove the duplicate", "profiles.%s lists %s twice", name, quote(svc))
			}
			seen[svc] = true
		}
		if list != nil && len(list) == 0 {
			d.errorf([]string{"profiles", name, "services"}, "name at least one service, or remove the profile", "profiles.%s.services is empty", name)
		}
	}
}

// ProfileNames are the profiles of c, sorted.
func (c *Config) ProfileNames() []string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Needs is names with everything they need to run, in file order: what
// each depends_on, over and over.
func (c *Config) Needs(names []string) []string {
	in := map[string]bool{}
	var add func(string)
	add = func(n string) {
		svc, ok := c.Services[n]
		if !ok || in[n] {
			return
		}
		in[n] = true
		for _, dep := range svc.DependsOn {
			add(dep)
		}
	}
	for _, n := range names {
		add(n)
	}
	var out []string
	for _, n := range c.Order {
		if in[n] {
			out = append(out, n)
		}
	}
	return out
}
