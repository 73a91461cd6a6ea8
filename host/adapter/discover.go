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
	// Origin says which search directory it was found in: PATH, home
	// ($BINKY_HOME/adapters) or system (a system adapter directory).
	Origin string `json:"origin"`
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
// sorted by name and then search order (the winner of a name first). The
// binaries not in the cache are described in parallel.
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
// first in search order: PATH, then $BINKY_HOME/adapters, then the system
// adapter directories), then an alias
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
//
// It describes only what the answer depends on: the binary named
// binky-adapter-<name>, when there is one (its cached failure is not
// trusted: it is described again, as the caller needs it), and otherwise
// the winner of every other name, in parallel, to find the alias. A cached
// failure keeps a broken binary from being run again until it changes.
func (h *Host) Locate(ctx context.Context, name string) (*Info, error) {
	cands := h.candidates(ctx)
	var exact []candidate
	for _, c := range cands {
		if c.name == name {
			exact = append(exact, c)
		}
	}
	if len(exact) > 0 {
		set := h.startDescribes(ctx, exact[:1], true)
		defer set.release()
		info, err := set.wait(ctx, 0)
		if err != nil {
			return nil, err
		}
		for _, c := range exact[1:] {
			info.Shadowed = append(info.Shadowed, c.path)
		}
		return &info, nil
	}

	// Every winner is described (they run in parallel) before the first in
	// search order that claims the alias is chosen: one that is slow to
	// answer is then cached rather than cut short on every lookup.
	winners := winnersOf(cands)
	set := h.startDescribes(ctx, winners, false)
	defer set.release()
	found := make([]Info, len(winners))
	for i := range winners {
		info, err := set.wait(ctx, i)
		if err != nil {
			return nil, err
		}
		found[i] = info
	}
	for i := range found {
		if found[i].Error == "" && slices.Contains(found[i].Aliases, name) {
			return &found[i], nil
		}
	}
	return nil, h.notFound(ctx, name, found)
}

// winnersOf keeps the first candidate of each name, in search order.
func winnersOf(cands []candidate) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for _, c := range cands {
		if !seen[c.name] {
			seen[c.name] = true
			out = append(out, c)
		}
	}
	return out
}

func (h *Host) notFound(ctx context.Context, name string, found []Info) error {
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
	var path, others []string
	for _, d := range h.dirs(ctx) {
		if d.origin == OriginPath {
			path = append(path, d.dir)
		} else {
			others = append(others, d.dir)
		}
	}
	where := "your PATH (" + strings.Join(path, string(os.PathListSeparator)) + ")"
	if len(path) == 0 {
		where = "your PATH (empty)"
	}
	if len(others) > 0 {
		where += ", " + strings.Join(others, ", ")
	}
	put := "on your PATH"
	if h.home != "" {
		put += " or in " + filepath.Join(h.home, "adapters")
	}
	return fmt.Errorf("%w: no %s%s in %s (found: %s); install the binky-adapter-%s package, or put that executable %s, then check with `binky adapters`",
		ErrNotFound, Prefix, name, where, list, name, put)
}

// candidate is one executable found in a search directory.
type candidate struct {
	name   string
	path   string
	origin string
}

// candidates lists every adapter executable in search order.
func (h *Host) candidates(ctx context.Context) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for _, sd := range h.dirs(ctx) {
		dir := sd.dir
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
				out = append(out, candidate{name: name, path: p, origin: sd.origin})
			}
		}
	}
	return out
}

// scan describes every candidate (through the cache, in parallel) and marks
// shadowing.
func (h *Host) scan(ctx context.Context) ([]Info, error) {
	cands := h.candidates(ctx)
	set := h.startDescribes(ctx, cands, false)
	defer set.release()
	var out []Info
	winner := map[string]int{}
	for i, c := range cands {
		info, err := set.wait(ctx, i)
		if err != nil {
			return nil, err
		}
		if w, ok := winner[c.name]; ok {
			info.ShadowedBy = out[w].Path
			out[w].Shadowed = append(out[w].Shadowed, c.path)
		} else {
			winner[c.name] = len(out)
		}
		out = append(out, info)
	}
	return out, nil
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
