package config

import (
	"strings"

	"github.com/binkyhq/binky/sdk/names"
)

// names decodes [project] hostname, apex and stable_names.
func (d *decoder) names(p *Project, k string, v any, kp []string) {
	switch k {
	case "hostname":
		s, ok := d.nonEmpty(v, kp)
		if !ok {
			return
		}
		p.Hostname = s
		if err := names.CheckHostTemplate(s); err != nil {
			d.errorf(kp, `write the labels before the apex with placeholders, e.g. hostname = "{service}.{worktree}.{project}" (the default); placeholders: {service}, {worktree}, {branch}, {project}, {user}`,
				"project.hostname %s %v", quote(s), err)
		}
	case "apex":
		s, ok := d.nonEmpty(v, kp)
		if !ok {
			return
		}
		p.Apex = s
		if err := names.CheckApex(s); err != nil {
			d.errorf(kp, `write a zone such as apex = "test" (the default is "localhost")`, "project.apex %s: %v", quote(s), err)
		} else if s == "local" || strings.HasSuffix(s, ".local") {
			d.warnf(kp, `use "test" or "localhost": .local is multicast DNS's, and resolvers send it to the network`, "project.apex %s is under .local", quote(s))
		} else if _, private := names.PrivateZone(s); !private {
			d.warnf(kp, `use a zone no one can register: "test", "internal", "example", "home.arpa" or "localhost"`,
				"project.apex %s is a public zone: binky serves its names over http but certifies none (a local CA for it could vouch for real sites)", quote(s))
		}
	case "stable_names":
		list, ok := d.strList(v, kp)
		if !ok {
			return
		}
		seen := map[string]bool{}
		for i, n := range list {
			ep := join(kp, elem(i))
			switch {
			case !names.IsLabel(n):
				d.errorf(ep, `each stable name is one DNS label: lowercase letters, digits and -, e.g. stable_names = ["app", "app2", "app3"]`,
					"project.stable_names: %s is not a DNS label", quote(n))
			case seen[n]:
				d.errorf(ep, "list each name once", "project.stable_names: %s is listed twice", quote(n))
			default:
				seen[n] = true
				p.StableNames = append(p.StableNames, n)
			}
		}
		if len(list) == 0 {
			d.errorf(kp, `list at least one name, or remove the key`, "project.stable_names is empty")
		}
	}
}

// namesAgree warns about a hostname template that gives every world the
// same names, or that leaves stable names unused.
func (d *decoder) namesAgree(p *Project, path []string) {
	t := p.Hostname
	if t == "" || names.CheckHostTemplate(t) != nil {
		return
	}
	hasWorktree := strings.Contains(t, "{worktree}")
	switch {
	case len(p.StableNames) > 0 && !hasWorktree:
		d.warnf(join(path, "hostname"), "add {worktree} to the template: a stable name takes its place",
			"project.hostname %s has no {worktree}, so stable_names change no name", quote(t))
	case !hasWorktree && !strings.Contains(t, "{branch}"):
		d.warnf(join(path, "hostname"), "add {worktree} (or {branch}) to the template",
			"project.hostname %s gives every world the same names: only one world of the project can be up at a time", quote(t))
	}
}
