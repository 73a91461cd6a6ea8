package golden

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/binkyhq/binky/host/safefile"
	"github.com/binkyhq/binky/host/tokens"
)

// MaxInputFiles bounds how many files the inputs of one service may match:
// every up hashes them all.
const MaxInputFiles = 20000

// keyVersion starts every key, so a change to how keys are made never lets
// an old template answer for a new key.
const keyVersion = "binky-golden-2"

// Spec is what a template is built from.
type Spec struct {
	Migrate, Seed string
	Adapter       string
	// AdminURL is the service's rendered admin URL; only its scheme, host
	// and port count (Server), never its credentials.
	AdminURL string
	// Inputs are globs relative to the worktree root ("**" crosses
	// directories). A glob that matches a directory covers every file
	// under it.
	Inputs []string
	// EnvSum is EnvSum of the service's rendered env (what migrate and
	// seed get: a seed's admin password, a locale), "" when it has none:
	// changing a value builds a new template. Only the digest enters the
	// key and the record, never a value.
	EnvSum string
	// ConfigSum is ConfigSum of the service's rendered adapter config,
	// "" when it has none: a setting that changes what the adapter puts
	// in a slice (postgres owner_role: who owns the tables; mysql
	// charset) changes what a clone of the template contains, so every
	// setting builds a template of its own.
	ConfigSum string
}

// EnvSum digests a service's rendered env for a key: each name with the
// SHA-256 of its value, sorted by name, hashed again. "" for an empty env,
// so keys of services without env stay what they were.
func EnvSum(env map[string]string) string {
	if len(env) == 0 {
		return ""
	}
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		v := sha256.Sum256([]byte(env[n]))
		fmt.Fprintf(h, "%d:%s=%x\n", len(n), n, v)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TemplateCoords are the coordinates a template key renders with: every
// token of coords except those that differ between worlds by design and
// not by what a template holds, which stay as written: the service's own
// (${self.*} and ${<svc>.*} name the slice being built, the template's
// while it is built and each world's after) and the worktree's
// (${worktree.name}, ${worktree.path}), so every worktree shares one
// template.
func TemplateCoords(svc string, coords map[string]string) map[string]string {
	out := make(map[string]string, len(coords))
	for k, v := range coords {
		if strings.HasPrefix(k, svc+".") || k == tokens.WorktreeName || k == tokens.WorktreePath {
			continue
		}
		out[k] = v
	}
	return out
}

// TemplateEnv renders a service's env for its template key, with
// TemplateCoords.
func TemplateEnv(env map[string]string, svc string, coords map[string]string) map[string]string {
	if len(env) == 0 {
		return nil
	}
	kept := TemplateCoords(svc, coords)
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = tokens.Render(v, "", kept)
	}
	return out
}

// TemplateConfig renders a service's adapter config for its template key
// as the host renders it for the adapter (its top-level strings), with
// TemplateCoords.
func TemplateConfig(cfg map[string]any, svc string, coords map[string]string) map[string]any {
	if len(cfg) == 0 {
		return nil
	}
	kept := TemplateCoords(svc, coords)
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		if s, ok := v.(string); ok {
			v = tokens.Render(s, "", kept)
		}
		out[k] = v
	}
	return out
}

// ConfigSum digests an adapter config for a key: the SHA-256 of its
// canonical JSON (keys sorted at every depth). "" for an empty config, so
// keys of services without one stay what they were. A config JSON cannot
// hold (none that TOML decodes to) digests its Go printing.
func ConfigSum(cfg map[string]any) string {
	if len(cfg) == 0 {
		return ""
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		b = []byte(fmt.Sprintf("%#v", cfg))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Input is one file that joined a key, or a glob that matched nothing
// (Path is the pattern, SHA256 is empty, NoMatch is true).
type Input struct {
	Path    string
	SHA256  string
	NoMatch bool
}

// Key is a template's identity.
type Key struct {
	// Sum is the hex SHA-256 over the spec and the inputs' content.
	Sum    string
	Inputs []Input
	// EnvSum and ConfigSum are the spec's, for the record.
	EnvSum, ConfigSum string
}

// Short is the first 8 hex digits of the key, the part shown and put in
// template names.
func (k Key) Short() string { return Short(k.Sum) }

// Short is the first 8 hex digits of a key sum.
func Short(sum string) string {
	if len(sum) > 8 {
		return sum[:8]
	}
	return sum
}

// Server is an admin URL reduced to scheme://host[:port]: which server a
// template lives on, without credentials, path or options. An empty or
// unparsable URL (file adapters have none) is "".
func Server(admin string) string {
	u, err := url.Parse(admin)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// KeyOf computes the key of spec for the worktree at root: the same
// commands, adapter, server and input content give the same key, and a
// change to any file the inputs match gives another.
func KeyOf(spec Spec, root string) (Key, error) {
	inputs, err := hashInputs(root, spec.Inputs)
	if err != nil {
		return Key{}, err
	}
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	field(keyVersion)
	field(spec.Migrate)
	field(spec.Seed)
	field(spec.Adapter)
	field(Server(spec.AdminURL))
	if spec.EnvSum != "" {
		field("env")
		field(spec.EnvSum)
	}
	if spec.ConfigSum != "" {
		field("config")
		field(spec.ConfigSum)
	}
	for _, in := range inputs {
		field(in.Path)
		if in.NoMatch {
			field("no match")
		} else {
			field(in.SHA256)
		}
	}
	return Key{Sum: hex.EncodeToString(h.Sum(nil)), Inputs: inputs, EnvSum: spec.EnvSum, ConfigSum: spec.ConfigSum}, nil
}

// InputsOf hashes the files globs match under root, as KeyOf does: every
// matched file once, sorted, with the SHA-256 of its content, and each glob
// that matched nothing. host/warm keys [worktree] setup by it.
func InputsOf(root string, globs []string) ([]Input, error) {
	return hashInputs(root, globs)
}

// hashInputs lists every regular file the globs match under root, sorted
// by path and each once, with the SHA-256 of its content; a glob matching
// nothing contributes its pattern marked NoMatch. Only regular files (and
// symlinks to them) count: a FIFO, socket or device a glob reaches is
// passed over, as it has no content to key on, and one that a regular file
// turns into between the listing and the read is refused by name
// (safefile), never opened in a way that blocks or reads without end.
// Content is hashed as it streams, so a large input costs time, not memory.
func hashInputs(root string, globs []string) ([]Input, error) {
	fsys := os.DirFS(root)
	files := map[string]bool{}
	var unmatched []string
	for _, g := range globs {
		matches, err := doublestar.Glob(fsys, g)
		if err != nil {
			return nil, fmt.Errorf("inputs glob %q: %w", g, err)
		}
		n := 0
		for _, m := range matches {
			err := fs.WalkDir(fsys, m, func(p string, de fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if de.Type().IsRegular() || de.Type()&fs.ModeSymlink != 0 && isFile(fsys, p) {
					files[p] = true
					n++
					if len(files) > MaxInputFiles {
						return errTooMany
					}
				}
				return nil
			})
			if errors.Is(err, errTooMany) {
				return nil, fmt.Errorf("inputs match more than %d files; narrow the globs (e.g. \"db/migrations/**\" rather than \"**\")", MaxInputFiles)
			}
			if err != nil {
				return nil, fmt.Errorf("inputs glob %q: %w", g, err)
			}
		}
		if n == 0 {
			unmatched = append(unmatched, g)
		}
	}
	out := make([]Input, 0, len(files)+len(unmatched))
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		sum, err := hashFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("read input %s: %w", p, err)
		}
		out = append(out, Input{Path: path.Clean(p), SHA256: sum})
	}
	slices.Sort(unmatched)
	for _, g := range slices.Compact(unmatched) {
		out = append(out, Input{Path: g, NoMatch: true})
	}
	return out, nil
}

var errTooMany = errors.New("too many input files")

func isFile(fsys fs.FS, p string) bool {
	fi, err := fs.Stat(fsys, p)
	return err == nil && fi.Mode().IsRegular()
}

// hashFile is the SHA-256 of the regular file at p.
func hashFile(p string) (string, error) {
	f, err := safefile.OpenRegular(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
