package world

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
)

// Selection is the services a world runs when up chose some: a profile of
// binky.toml, --only some services or --except some. The zero Selection
// runs all of them. It is recorded with the world as JSON (Encode).
type Selection struct {
	Profile string   `json:"profile,omitempty"`
	Only    []string `json:"only,omitempty"`
	Except  []string `json:"except,omitempty"`
}

// All reports whether s runs every service.
func (s Selection) All() bool {
	return s.Profile == "" && len(s.Only) == 0 && len(s.Except) == 0
}

// Encode is s as the registry records it: "" for all services.
func (s Selection) Encode() string {
	if s.All() {
		return ""
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// decodeSelection reads a recorded selection; one that does not decode
// (written by a newer binky) runs every service.
func decodeSelection(recorded string) Selection {
	var s Selection
	if recorded == "" || json.Unmarshal([]byte(recorded), &s) != nil {
		return Selection{}
	}
	return s
}

// String names s as status shows it: "profile frontend", "--only
// web,api", "--except worker"; "" for all services.
func (s Selection) String() string {
	switch {
	case s.Profile != "":
		return "profile " + s.Profile
	case len(s.Only) > 0:
		return "--only " + strings.Join(s.Only, ",")
	case len(s.Except) > 0:
		return "--except " + strings.Join(s.Except, ",")
	}
	return ""
}

// why says why s leaves a service out, for the plan and status.
func (s Selection) why() string {
	if len(s.Except) > 0 {
		return "left out by " + s.String()
	}
	return "not in " + s.String()
}

// selectionArgs is the selection an up's arguments ask for; given is
// false when they ask for none (the world keeps its recorded one). Two
// of --profile, --only, --except and --all are an error.
func selectionArgs(a api.UpArgs) (sel Selection, given bool, err error) {
	var flags []string
	if a.Profile != "" {
		flags = append(flags, "--profile")
	}
	if len(a.Only) > 0 {
		flags = append(flags, "--only")
	}
	if len(a.Except) > 0 {
		flags = append(flags, "--except")
	}
	if a.All {
		flags = append(flags, "--all")
	}
	if len(flags) > 1 {
		return Selection{}, false, api.Errorf(api.CodeInvalid, "up takes one of --profile, --only, --except and --all, not %s", strings.Join(flags, " and "))
	}
	sel = Selection{Profile: a.Profile, Only: splitNames(a.Only), Except: splitNames(a.Except)}
	return sel, len(flags) == 1, nil
}

// splitNames flattens names given as a list or comma-separated ("web,api"),
// each once, in order.
func splitNames(list []string) []string {
	var out []string
	for _, item := range list {
		for _, n := range strings.Split(item, ",") {
			if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// resolve is the set of services of cfg that s runs: the ones it names
// and what they need (depends_on, over and over, and the slices whose
// tokens a selected service reads). nil for all services. A name that is
// not a service or profile of cfg, and an --except of a service another
// selected one needs, are errors.
func (s Selection) resolve(cfg *config.Config) (map[string]bool, error) {
	if s.All() {
		return nil, nil
	}
	var roots []string
	switch {
	case s.Profile != "":
		list, ok := cfg.Profiles[s.Profile]
		if !ok {
			have := "it has none: add a [profiles." + s.Profile + "] table"
			if names := cfg.ProfileNames(); len(names) > 0 {
				have = "its profiles are " + strings.Join(names, ", ")
			}
			return nil, api.Errorf(api.CodeInvalid, "%s has no profile %q (%s); up --all runs every service", cfg.File, s.Profile, have)
		}
		roots = list
	case len(s.Only) > 0:
		roots = s.Only
	default:
		for _, n := range cfg.Order {
			if !slices.Contains(s.Except, n) {
				roots = append(roots, n)
			}
		}
	}
	for _, n := range slices.Concat(s.Only, s.Except) {
		if _, ok := cfg.Services[n]; !ok {
			return nil, api.Errorf(api.CodeInvalid, "%s names %q, which is not a service of %s (its services are %s)", s, n, cfg.File, strings.Join(cfg.Order, ", "))
		}
	}
	// What a selected service needs: its dependencies, and the slices
	// whose tokens it reads (it cannot be rendered without them), until
	// nothing is added.
	names := cfg.Needs(roots)
	for {
		more := slices.Clone(names)
		for _, n := range names {
			if svc := cfg.Services[n]; !svc.IsAdapter() {
				more = append(more, slicesUsed(cfg, svc)...)
			}
		}
		more = cfg.Needs(more)
		if len(more) == len(names) {
			break
		}
		names = more
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	for _, n := range s.Except {
		if set[n] {
			by := neededBy(cfg, set, n)
			return nil, api.Errorf(api.CodeInvalid, "--except %s: %s needs it, so it would run anyway; leave %s out too, or choose with --only", n, by, by)
		}
	}
	return set, nil
}

// neededBy is a selected service of set that needs name directly.
func neededBy(cfg *config.Config, set map[string]bool, name string) string {
	for _, n := range cfg.Order {
		svc := cfg.Services[n]
		if !set[n] || n == name {
			continue
		}
		if slices.Contains(svc.DependsOn, name) || (!svc.IsAdapter() && slices.Contains(slicesUsed(cfg, svc), name)) {
			return n
		}
	}
	return "another service"
}

// selected is what a world's selection makes of cfg: in reports whether
// it runs a service; why says why it leaves one out. A recorded selection
// that no longer resolves (its profile removed) runs every service here:
// up says why it cannot.
type selected struct {
	set map[string]bool // nil: every service
	why string
	sel Selection
}

func (s selected) in(name string) bool { return s.set == nil || s.set[name] }

// selectionOf is the recorded selection of a world resolved against cfg.
func selectionOf(cfg *config.Config, recorded string) selected {
	sel := decodeSelection(recorded)
	set, err := sel.resolve(cfg)
	if err != nil {
		return selected{}
	}
	return selected{set: set, why: sel.why(), sel: sel}
}

// skipped are the services of cfg that sel leaves out, in file order, as
// the plan takes them.
func (s selected) skipped(cfg *config.Config) []string {
	var out []string
	for _, n := range cfg.Order {
		if !s.in(n) {
			out = append(out, n)
		}
	}
	return out
}

// upSelection is the selection an up runs the world with: the one its
// arguments ask for, else the one recorded with the world, else every
// service; resolved against cfg, so a name that is not there fails the up
// before anything changes.
func (e *Engine) upSelection(ctx context.Context, cfg *config.Config, name string, a api.UpArgs) (selected, error) {
	sel, given, err := selectionArgs(a)
	if err != nil {
		return selected{}, err
	}
	recorded := false
	if !given {
		if old, err := e.reg.Worktree(ctx, cfg.Project.Name, name); err == nil && old.Selection != "" {
			sel, recorded = decodeSelection(old.Selection), true
		}
	}
	set, err := sel.resolve(cfg)
	if err != nil {
		if recorded {
			return selected{}, api.Errorf(api.CodeInvalid, "the world %s runs %s, as its last up chose: %v; choose again with --profile, --only or --except, or up --all", name, sel, err)
		}
		return selected{}, err
	}
	return selected{set: set, why: sel.why(), sel: sel}, nil
}

var _ fmt.Stringer = Selection{}
