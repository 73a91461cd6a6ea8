package golden

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// recordVersion is written in every record; a record of a newer version is
// listed but never rewritten.
const recordVersion = 2

// Record is what binky knows of one template.
type Record struct {
	Version   int    `json:"version"`
	Project   string `json:"project"`
	Service   string `json:"service"`
	CloneFrom string `json:"clone_from"`
	Adapter   string `json:"adapter"`
	// Server is the admin URL's scheme://host:port ("" for file adapters).
	Server string `json:"server,omitempty"`
	// EnvSum is the digest of the service's rendered env the key was
	// made with (Spec.EnvSum), never the values.
	EnvSum string `json:"env_sum,omitempty"`
	// ConfigSum is the digest of the service's rendered adapter config
	// the key was made with (Spec.ConfigSum).
	ConfigSum string `json:"config_sum,omitempty"`
	Slice     string `json:"slice"`
	// Key is the full key sum; "" for a marker left by an older binky,
	// whose key is unknown (it is never cloned again, only dropped).
	Key      string    `json:"key"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	// Worlds are the worktree names whose slices were cloned from it;
	// ClonedAt is when each last was (a world re-cloned from a newer
	// template is that one's: Current).
	Worlds   []string             `json:"worlds,omitempty"`
	ClonedAt map[string]time.Time `json:"cloned_at,omitempty"`
	// Method is how the adapter said its latest clone was made (the
	// slice_cloned event's method); Methods is the latest per world.
	// Sharing reads them.
	Method  string            `json:"method,omitempty"`
	Methods map[string]string `json:"methods,omitempty"`
	// Bytes is the template's size on its server as the adapter said at
	// the latest clone (CloneResponse.SourceBytes); 0 when unknown.
	Bytes int64 `json:"bytes,omitempty"`
	// Path is the worktree the template was built in: where drop finds the
	// service's config when the caller is elsewhere.
	Path string `json:"path,omitempty"`
	// State is "" for a template that is ready to clone; StateBuilding
	// from before its build starts on the server until it succeeds (a
	// build cut short by a killed daemon stays so); StateBroken when a
	// failed build or clone left it on the server and dropping it failed.
	// Only a ready template is cloned; list shows the others, and drop
	// removes them.
	State string `json:"state,omitempty"`

	// Legacy marks a marker file of the old single-template format.
	Legacy bool `json:"-"`
}

// Template states (Record.State).
const (
	StateBuilding = "building"
	StateBroken   = "broken"
)

// Ready reports whether the template was built whole and may be cloned.
func (r *Record) Ready() bool { return r.State == "" && !r.Legacy }

// Used records that world cloned the template now.
func (r *Record) Used(world string, now time.Time) {
	r.LastUsed = now
	if world == "" {
		return
	}
	if !slices.Contains(r.Worlds, world) {
		r.Worlds = append(r.Worlds, world)
	}
	if r.ClonedAt == nil {
		r.ClonedAt = map[string]time.Time{}
	}
	r.ClonedAt[world] = now
}

// clonedAt is when world last cloned r: its ClonedAt, else (a record
// written before it was kept) the template's last use.
func (r *Record) clonedAt(world string) time.Time {
	if t, ok := r.ClonedAt[world]; ok {
		return t
	}
	return r.LastUsed
}

// Current reports whether r is the template world's slice of r's service
// was last cloned from, among recs: a world re-cloned from a newer
// template (its migrations changed) is listed under that one only.
func (r *Record) Current(world string, recs []*Record) bool {
	if !slices.Contains(r.Worlds, world) {
		return false
	}
	mine := r.clonedAt(world)
	for _, o := range recs {
		if o == r || o.Project != r.Project || o.Service != r.Service || !slices.Contains(o.Worlds, world) {
			continue
		}
		if o.clonedAt(world).After(mine) {
			return false
		}
	}
	return true
}

// Cloned records that world cloned the template now, by method.
func (r *Record) Cloned(world, method string, now time.Time) {
	r.Used(world, now)
	if method == "" {
		return
	}
	r.Method = method
	if world != "" {
		if r.Methods == nil {
			r.Methods = map[string]string{}
		}
		r.Methods[world] = method
	}
}

// Store keeps one record per template as golden/<adapter>/<slice>.json
// under a BINKY_HOME. It does no locking: the daemon changes a template's
// record only while holding that template's lock.
type Store struct{ dir string }

// NewStore is the store of the BINKY_HOME home.
func NewStore(home string) *Store { return &Store{dir: filepath.Join(home, "golden")} }

func (s *Store) path(adapter, slice string) string {
	return filepath.Join(s.dir, adapter, slice+".json")
}

// Get reads one template's record; an fs.ErrNotExist error when there is
// none.
func (s *Store) Get(adapter, slice string) (*Record, error) {
	b, err := os.ReadFile(s.path(adapter, slice))
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read template record %s: %w", s.path(adapter, slice), err)
	}
	return &r, nil
}

// Put writes a record atomically, mode 0600.
func (s *Store) Put(r *Record) error {
	if r.Legacy || r.Version > recordVersion {
		return fmt.Errorf("template record %s is not in this binky's format; drop it with binky golden drop %s", r.Slice, r.Slice)
	}
	r.Version = recordVersion
	p := s.path(r.Adapter, r.Slice)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write template record: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write template record: %w", err)
	}
	return nil
}

// Delete removes a template's record (or legacy marker); a missing one is
// no error.
func (s *Store) Delete(r *Record) error {
	p := s.path(r.Adapter, r.Slice)
	if r.Legacy {
		p = filepath.Join(s.dir, r.Adapter, r.Slice)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove template record %s: %w", p, err)
	}
	return nil
}

// List reads every record, sorted by project, clone_from, then most
// recently used first. A marker file of the old format (golden/<adapter>/
// <project>_golden_<clone_from>, holding a hash) is listed as a Legacy
// record with an unknown key. Unreadable records are skipped and reported
// in the error, which never hides the records that were read.
func (s *Store) List() ([]*Record, error) {
	adapters, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list templates in %s: %w", s.dir, err)
	}
	var out []*Record
	var errs []error
	for _, a := range adapters {
		if !a.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(s.dir, a.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			name := f.Name()
			switch {
			case !f.Type().IsRegular(), strings.HasSuffix(name, ".tmp"):
			case strings.HasSuffix(name, ".json"):
				r, err := s.Get(a.Name(), strings.TrimSuffix(name, ".json"))
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out = append(out, r)
			default:
				out = append(out, legacy(a.Name(), name, f))
			}
		}
	}
	slices.SortFunc(out, func(a, b *Record) int {
		if c := strings.Compare(a.Project, b.Project); c != 0 {
			return c
		}
		if c := strings.Compare(a.CloneFrom, b.CloneFrom); c != 0 {
			return c
		}
		if c := b.LastUsed.Compare(a.LastUsed); c != 0 {
			return c
		}
		return strings.Compare(a.Slice, b.Slice)
	})
	return out, errors.Join(errs...)
}

// legacy makes a record of an old marker. Its project and clone_from are
// read back from a plain name (<project>_golden_<clone_from>); a hashed
// name leaves them empty.
func legacy(adapter, name string, f fs.DirEntry) *Record {
	r := &Record{Adapter: adapter, Slice: name, Legacy: true}
	if p, cf, ok := strings.Cut(name, "_golden_"); ok && !strings.Contains(cf, "__") {
		r.Project, r.CloneFrom = p, cf
	}
	if fi, err := f.Info(); err == nil {
		r.Created = fi.ModTime()
	}
	return r
}
