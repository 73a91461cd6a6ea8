package config

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/binkyhq/binky/host/tokens"
	"github.com/bmatcuk/doublestar/v4"
)

// DefaultSetupTimeout bounds each [worktree] setup command when timeout
// is not set.
const DefaultSetupTimeout = 10 * time.Minute

// Worktree is the [worktree] table: what a new worktree gets before its
// services start (docs/warm.md).
type Worktree struct {
	// Copy are globs of ignored paths copied from the main worktree (or
	// CopyFrom's) into a new worktree.
	Copy []string
	// CopyFrom is the branch whose worktree Copy reads; empty: the main
	// worktree.
	CopyFrom string
	// Setup are commands run in a new worktree after Copy, and again when
	// the content Inputs match changes.
	Setup  []string
	Inputs []string
	// Teardown are commands run in the worktree when binky remove removes
	// its world, before the worktree and the slices go: the undo of what
	// setup made outside the worktree (a docker volume, a hosts entry, a
	// queue on a shared broker).
	Teardown []string
	// Timeout bounds each setup command; DefaultSetupTimeout when unset.
	Timeout time.Duration
}

// SetupTimeout is w.Timeout, or DefaultSetupTimeout when unset.
func (w *Worktree) SetupTimeout() time.Duration {
	if w.Timeout > 0 {
		return w.Timeout
	}
	return DefaultSetupTimeout
}

// worktree decodes the [worktree] table.
func (d *decoder) worktree(c *Config, m map[string]any) {
	w := &c.Worktree
	p := []string{"worktree"}
	for _, k := range d.keysInOrder(p, m) {
		v, kp := m[k], join(p, k)
		switch k {
		case "copy":
			list, _ := d.strList(v, kp)
			for i, g := range list {
				d.copyGlob(join(kp, elem(i)), g)
			}
			w.Copy = list
		case "copy_from":
			w.CopyFrom, _ = d.nonEmpty(v, kp)
		case "setup":
			list, _ := d.strList(v, kp)
			for i, s := range list {
				if strings.TrimSpace(s) == "" {
					d.errorf(join(kp, elem(i)), "give a command or remove the entry", "worktree.setup[%d] is empty", i)
				}
			}
			w.Setup = list
		case "teardown":
			list, _ := d.strList(v, kp)
			for i, s := range list {
				if strings.TrimSpace(s) == "" {
					d.errorf(join(kp, elem(i)), "give a command or remove the entry", "worktree.teardown[%d] is empty", i)
				}
			}
			w.Teardown = list
		case "inputs":
			list, _ := d.strList(v, kp)
			for i, g := range list {
				if !doublestar.ValidatePattern(g) || path.IsAbs(g) {
					d.errorf(join(kp, elem(i)), `write a glob relative to the worktree, e.g. "pnpm-lock.yaml" or "requirements/**"`, "worktree.inputs[%d] %s is not a relative glob", i, quote(g))
				}
			}
			w.Inputs = list
		case "timeout":
			w.Timeout, _ = d.duration(v, kp)
		default:
			d.unknown(p, k, worktreeKeys, "[worktree]")
		}
	}
	if len(w.Copy) == 0 && w.CopyFrom != "" {
		d.warnf(join(p, "copy_from"), "add copy = [\"node_modules\", …] or remove copy_from", "worktree.copy_from does nothing without copy")
	}
	if len(w.Setup) > 0 && len(w.Inputs) == 0 {
		d.warnf(join(p, "setup"), `list the files setup reads, e.g. inputs = ["pnpm-lock.yaml"], so it runs again when they change`,
			"worktree.setup has no inputs: it runs once per worktree and never again")
	}
	if len(w.Inputs) > 0 && len(w.Setup) == 0 {
		d.warnf(join(p, "inputs"), "add setup = [\"…\"] or remove inputs", "worktree.inputs does nothing without setup")
	}
}

// worktreeRefs checks the tokens of [worktree] setup once every service is
// known: setup runs before any slice exists and belongs to no service.
func (d *decoder) worktreeRefs(c *Config) {
	p := []string{"worktree"}
	for i, s := range c.Worktree.Setup {
		for _, ref := range tokens.Refs(s) {
			if ref == "self" || strings.HasPrefix(ref, "self.") {
				d.errorf(join(p, "setup", elem(i)), "setup belongs to no service: name one, e.g. ${web.port}", "worktree.setup[%d] uses ${%s}", i, ref)
				continue
			}
			name, _, _ := strings.Cut(ref, ".")
			if svc := c.Services[name]; svc != nil && svc.IsAdapter() {
				d.errorf(join(p, "setup", elem(i)), "setup runs before slices are made; use the address in a migrate or a service instead", "worktree.setup[%d] uses ${%s}, an adapter service's address", i, ref)
			}
		}
	}
}

// copyGlob checks one [worktree] copy glob: relative, without .., valid.
func (d *decoder) copyGlob(kp []string, g string) {
	const hint = `write a glob relative to the worktree's top, e.g. "node_modules" or "packages/*/node_modules"`
	switch {
	case strings.TrimSpace(g) == "":
		d.errorf(kp, "give a glob or remove the entry", "%s is empty", keyName(kp))
	case path.IsAbs(g) || strings.Contains(g, `\`) || (len(g) > 1 && g[1] == ':'):
		d.errorf(kp, hint, "%s %s is not relative to the worktree", keyName(kp), quote(g))
	case slices.Contains(strings.Split(g, "/"), ".."):
		d.errorf(kp, hint+"; binky copies nothing from outside the repository", "%s %s climbs out of the worktree with ..", keyName(kp), quote(g))
	case !doublestar.ValidatePattern(g):
		d.errorf(kp, hint, "%s %s is not a valid glob", keyName(kp), quote(g))
	case path.Clean(g) == "." || path.Clean(g) == "**" || path.Clean(g) == "*":
		d.errorf(kp, hint, "%s %s copies the whole worktree", keyName(kp), quote(g))
	case g == ".git" || strings.HasPrefix(g, ".git/"):
		d.errorf(kp, hint, "%s %s names git's own directory", keyName(kp), quote(g))
	}
}
