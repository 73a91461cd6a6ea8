package adapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/client"
)

// ErrNotFound is wrapped by Find and Open when no binary and no alias has
// the name asked for.
var ErrNotFound = errors.New("adapter not found")

// Tier names, as Info.Tiers lists them.
const (
	TierOneShot = "oneshot"
	TierRPC     = "rpc"
)

// Info is one discovered adapter binary.
type Info struct {
	// Name is the file name after binky-adapter- (without .exe).
	Name string `json:"name"`
	// Aliases are the other names describe claims (valkey for redis).
	Aliases []string `json:"aliases,omitempty"`
	// Path is the binary.
	Path string `json:"path"`
	// Implementation is the name describe reports; it differs from Name
	// when the binary is installed under an alias's file name.
	Implementation string `json:"implementation,omitempty"`
	Version        string `json:"version,omitempty"`
	Protocol       int    `json:"protocol"`
	Clone          bool   `json:"clone"`
	RPC            bool   `json:"rpc"`
	// Tiers lists what the binary speaks: oneshot, and rpc when offered.
	Tiers []string `json:"tiers"`
	// ShadowedBy is the path of the binary that wins this Name (set on the
	// loser only).
	ShadowedBy string `json:"shadowed_by,omitempty"`
	// Shadowed lists the paths of binaries of the same Name that this one
	// hides.
	Shadowed []string `json:"shadowed,omitempty"`
	// Error says why describe failed; such a binary cannot be used.
	Error string `json:"error,omitempty"`
}

// List discovers every adapter binary: all of them, shadowed ones included,
// sorted by name and then search order (the winner of a name first).
func (h *Host) List(ctx context.Context) ([]Info, error) {
	found, err := h.scan(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Info, len(found))
	copy(out, found)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Find resolves name to a usable binary: first a binary of that name (the
// first in search order: PATH, then $BINKY_HOME/adapters), then an alias
// declared by one of the winning binaries (again the first in search order).
// An alias never overrides a binary's own name. A binary whose describe
// failed is an error, not skipped.
func (h *Host) Find(ctx context.Context, name string) (*Info, error) {
	info, err := h.Locate(ctx, name)
	if err != nil {
		return nil, err
	}
	if info.Error != "" {
		return nil, fmt.Errorf("adapter %q (%s) is unusable: %s", name, info.Path, info.Error)
	}
	return info, nil
}

// Locate resolves name as Find does but also returns a binary whose
// describe failed (Info.Error says why), for tools that diagnose it.
func (h *Host) Locate(ctx context.Context, name string) (*Info, error) {
	found, err := h.scan(ctx)
	if err != nil {
		return nil, err
	}
	info := resolve(found, name)
	if info == nil {
		return nil, h.notFound(name, found)
	}
	return info, nil
}

// resolve applies the name rules to the scan result.
func resolve(found []Info, name string) *Info {
	for i := range found {
		if found[i].Name == name && found[i].ShadowedBy == "" {
			return &found[i]
		}
	}
	for i := range found {
		if found[i].ShadowedBy == "" && found[i].Error == "" && slices.Contains(found[i].Aliases, name) {
			return &found[i]
		}
	}
	return nil
}

func (h *Host) notFound(name string, found []Info) error {
	var have []string
	for _, f := range found {
		if f.ShadowedBy != "" {
			continue
		}
		s := f.Name
		if len(f.Aliases) > 0 {
			s += " (" + strings.Join(f.Aliases, ", ") + ")"
		}
		have = append(have, s)
	}
	sort.Strings(have)
	list := "none"
	if len(have) > 0 {
		list = strings.Join(have, ", ")
	}
	where := "PATH"
	if h.home != "" {
		where += " or " + filepath.Join(h.home, "adapters")
	}
	return fmt.Errorf("%w: no %s%s on %s (found: %s); install the binky-adapter-%s package or put that executable on PATH, then check with `binky adapters`",
		ErrNotFound, Prefix, name, where, list, name)
}

// candidate is one executable found in a search directory.
type candidate struct {
	name string
	path string
}

// candidates lists every adapter executable in search order.
func (h *Host) candidates() []candidate {
	var out []candidate
	seen := map[string]bool{}
	for _, dir := range h.dirs() {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			continue // missing PATH entries are normal; so is one dir twice
		}
		seen[real] = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), Prefix) {
				continue
			}
			p := filepath.Join(dir, e.Name())
			st, err := os.Stat(p) // follows symlinks
			if err != nil {
				continue
			}
			if name, ok := adapterName(e.Name(), st.Mode()); ok {
				if abs, err := filepath.Abs(p); err == nil {
					p = abs
				}
				out = append(out, candidate{name: name, path: p})
			}
		}
	}
	return out
}

// scan finds every candidate, describes it (through the cache) and marks
// shadowing.
func (h *Host) scan(ctx context.Context) ([]Info, error) {
	cands := h.candidates()
	h.cacheMu.Lock()
	defer h.cacheMu.Unlock()
	cache := h.loadCache()
	fresh := newCache()
	var out []Info
	winner := map[string]int{}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("discover adapters: %w", err)
		}
		info := Info{Name: c.name, Path: c.path, Tiers: []string{}}
		key, keyErr := statKey(c.path)
		var d *sdk.DescribeResponse
		if keyErr == nil {
			d = cache.lookup(key)
		}
		if d == nil {
			var err error
			d, err = h.describe(ctx, c.name, c.path)
			if err != nil {
				info.Error = err.Error()
			}
		}
		if d != nil {
			fill(&info, d)
			if keyErr == nil {
				fresh.store(key, d)
			}
		}
		if w, ok := winner[c.name]; ok {
			info.ShadowedBy = out[w].Path
			out[w].Shadowed = append(out[w].Shadowed, c.path)
		} else {
			winner[c.name] = len(out)
		}
		out = append(out, info)
	}
	if !fresh.equal(cache) {
		if err := h.saveCache(fresh); err != nil {
			h.log.Warn("could not write the adapter cache; adapters will be described again next time", "error", err)
		}
	}
	return out, nil
}

// describe runs a one-shot describe and checks the answer is usable.
func (h *Host) describe(ctx context.Context, name, path string) (*sdk.DescribeResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, h.describeTimeout)
	defer cancel()
	b := h.binary(path, name, func() string { return sdk.CallDescribe })
	d, err := client.Describe(ctx, b, &sdk.DescribeRequest{Header: sdk.Header{Protocol: sdk.Protocol, Adapter: name}})
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	switch {
	case d.Protocol < 1:
		return nil, fmt.Errorf("describe reply has no protocol version (want 1..%d)", sdk.Protocol)
	case d.Protocol > sdk.Protocol:
		return nil, fmt.Errorf("adapter speaks protocol %d; this binky knows protocol %d: upgrade binky", d.Protocol, sdk.Protocol)
	case d.Name == "":
		return nil, errors.New("describe reply has no name")
	}
	return d, nil
}

func fill(info *Info, d *sdk.DescribeResponse) {
	info.Implementation = d.Name
	info.Version = d.Version
	info.Protocol = d.Protocol
	info.Clone = d.Clone
	info.RPC = d.RPC
	info.Tiers = []string{TierOneShot}
	if d.RPC {
		info.Tiers = append(info.Tiers, TierRPC)
	}
	for _, a := range d.Aliases {
		if a != "" && a != info.Name && !slices.Contains(info.Aliases, a) {
			info.Aliases = append(info.Aliases, a)
		}
	}
}

// validName is the shape of an adapter name: [a-z0-9][a-z0-9_-]*.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}
