package world

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"slices"
	"strings"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/registry"
)

// userName is the user name {user} stands for: the account the daemon
// runs as (the home's owner), else $USER or $USERNAME.
func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		name := u.Username
		if i := strings.LastIndexByte(name, '\\'); i >= 0 { // DOMAIN\user on Windows
			name = name[i+1:]
		}
		return name
	}
	if n := os.Getenv("USER"); n != "" {
		return n
	}
	return os.Getenv("USERNAME")
}

// claimNames gives the recorded world rec its names under cfg, before
// anything is started: a stable name from [project] stable_names (the one
// it holds, else the first free one), then every url service's hostname,
// each checked as a DNS name and claimed in the registry, where a name
// another world of any project of this home holds refuses the up naming
// that world. A new stable name and the hostnames are claimed in one
// registry transaction: an up refused for its hostnames keeps no stable
// name. rec.StableName is updated. It reports whether the world's stable
// name changed.
func (e *Engine) claimNames(ctx context.Context, cfg *config.Config, rec *registry.Worktree) (changed bool, err error) {
	// A world keeps the name it holds while the set lists it: only the
	// world's own ops (under its lock) change its name, so no write.
	keeps := rec.StableName != "" && slices.Contains(cfg.Project.StableNames, rec.StableName)
	if !keeps && (len(cfg.Project.StableNames) > 0 || rec.StableName != "") {
		n, err := e.reg.ClaimNames(ctx, rec.ID, cfg.Project.StableNames, func(stable string) (map[string]string, error) {
			with := *rec
			with.StableName = stable
			return e.hostsOf(cfg, &with)
		})
		if err != nil {
			return false, e.claimError(rec, err)
		}
		changed = n != rec.StableName
		rec.StableName = n
		return changed, nil
	}
	hosts, err := e.hostsOf(cfg, rec)
	if err != nil {
		return false, err
	}
	if held, err := e.reg.Hosts(ctx, rec.ID); err == nil && maps.Equal(held, hosts) {
		return false, nil // its names already: an up with nothing new writes nothing
	}
	if err := e.reg.ClaimHosts(ctx, rec.ID, hosts); err != nil {
		return false, e.claimError(rec, err)
	}
	return false, nil
}

// hostsOf is the hostname of every url service of rec under cfg,
// hostname → service.
func (e *Engine) hostsOf(cfg *config.Config, rec *registry.Worktree) (map[string]string, error) {
	hosts := map[string]string{}
	for _, name := range cfg.Order {
		svc := cfg.Services[name]
		if svc.IsAdapter() || svc.URL == "" {
			continue
		}
		h, err := e.hostName(cfg, rec, name)
		if err != nil {
			return nil, api.Errorf(api.CodeInvalid, "the hostname of %s: %v", name, err)
		}
		if other, dup := hosts[h]; dup {
			return nil, api.Errorf(api.CodeInvalid, "%s and %s would both be served at %s: give one a host = \"…\" of its own, or put {service} in [project] hostname", other, name, h)
		}
		hosts[h] = name
	}
	return hosts, nil
}

// claimError says why the registry refused rec's names.
func (e *Engine) claimError(rec *registry.Worktree, err error) error {
	var te *registry.TakenError
	var ae *api.Error
	switch {
	case errors.As(err, &te) && te.What == "hostname":
		return api.Errorf(api.CodeConflict, "%s/%s cannot be served at a name another world holds: %s: change [project] hostname (or the service's host) so the names differ, e.g. with {worktree}, or remove that world",
			rec.Project, rec.Name, holders(te, true))
	case errors.As(err, &te):
		return api.Errorf(api.CodeConflict, "%s/%s gets no stable name: every name of stable_names is held (%s): remove one of those worlds (binky remove <worktree>) or add a name to [project] stable_names",
			rec.Project, rec.Name, holders(te, false))
	case errors.As(err, &ae):
		return ae
	}
	return fmt.Errorf("claim the names of %s/%s: %w", rec.Project, rec.Name, err)
}

// holders names who holds what, for an error.
func holders(te *registry.TakenError, withService bool) string {
	parts := make([]string, 0, len(te.Holders))
	for _, h := range te.Holders {
		s := h.Name + " by world " + h.Project + "/" + h.Worktree
		if withService && h.Service != "" {
			s += " (service " + h.Service + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
