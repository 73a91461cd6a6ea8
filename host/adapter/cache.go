package adapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/binkyhq/binky/sdk"
)

// cacheVersion is the format of adapters.cache.json; another version is
// ignored (and rewritten). Version 1 gained "failures" without a bump: a
// binky that predates it ignores the field and drops it on its next write.
const cacheVersion = 1

// cacheKey identifies one build of a binary: when its path, size or mtime
// changes it is described again.
type cacheKey struct {
	Path    string
	Size    int64
	MtimeNS int64
}

func statKey(path string) (cacheKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return cacheKey{}, err
	}
	return cacheKey{Path: path, Size: st.Size(), MtimeNS: st.ModTime().UnixNano()}, nil
}

// cacheEntry is a describe that succeeded.
type cacheEntry struct {
	Path     string               `json:"path"`
	Size     int64                `json:"size"`
	MtimeNS  int64                `json:"mtime_ns"`
	Describe sdk.DescribeResponse `json:"describe"`
}

// failureEntry is a describe that failed (a hang, a crash, a reply that is
// not a describe): that build of the binary is not run again for discovery.
type failureEntry struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	Error   string `json:"error"`
}

type cacheFile struct {
	Version  int            `json:"version"`
	Adapters []cacheEntry   `json:"adapters"`
	Failures []failureEntry `json:"failures,omitempty"`
}

// describeCache maps a binary's path to its last describe, or to why that
// describe failed. A path is in one map or the other, never both.
type describeCache struct {
	entries  map[string]cacheEntry
	failures map[string]failureEntry
}

func newCache() *describeCache {
	return &describeCache{entries: map[string]cacheEntry{}, failures: map[string]failureEntry{}}
}

// lookup returns what is known of key: its describe, or the error its
// describe failed with. ok is false when the binary is new or changed.
func (c *describeCache) lookup(k cacheKey) (d *sdk.DescribeResponse, failure string, ok bool) {
	if e, ok := c.entries[k.Path]; ok && e.Size == k.Size && e.MtimeNS == k.MtimeNS {
		d := e.Describe
		d.Aliases = append([]string(nil), d.Aliases...)
		return &d, "", true
	}
	if f, ok := c.failures[k.Path]; ok && f.Size == k.Size && f.MtimeNS == k.MtimeNS {
		return nil, f.Error, true
	}
	return nil, "", false
}

func (c *describeCache) store(k cacheKey, d *sdk.DescribeResponse) {
	delete(c.failures, k.Path)
	d2 := *d
	d2.Aliases = append([]string(nil), d.Aliases...)
	c.entries[k.Path] = cacheEntry{Path: k.Path, Size: k.Size, MtimeNS: k.MtimeNS, Describe: d2}
}

func (c *describeCache) storeFailure(k cacheKey, msg string) {
	delete(c.entries, k.Path)
	c.failures[k.Path] = failureEntry{Path: k.Path, Size: k.Size, MtimeNS: k.MtimeNS, Error: msg}
}

// merge copies every entry of o over c's entry of the same path.
func (c *describeCache) merge(o *describeCache) {
	for _, e := range o.entries {
		delete(c.failures, e.Path)
		c.entries[e.Path] = e
	}
	for _, f := range o.failures {
		delete(c.entries, f.Path)
		c.failures[f.Path] = f
	}
}

// prune drops the entries of binaries that are gone or have changed since.
func (c *describeCache) prune() {
	for p, e := range c.entries {
		if k, err := statKey(p); err != nil || k.Size != e.Size || k.MtimeNS != e.MtimeNS {
			delete(c.entries, p)
		}
	}
	for p, f := range c.failures {
		if k, err := statKey(p); err != nil || k.Size != f.Size || k.MtimeNS != f.MtimeNS {
			delete(c.failures, p)
		}
	}
}

// encode renders the cache deterministically (entries sorted by path).
func (c *describeCache) encode() []byte {
	f := cacheFile{Version: cacheVersion, Adapters: []cacheEntry{}}
	for _, e := range c.entries {
		f.Adapters = append(f.Adapters, e)
	}
	for _, e := range c.failures {
		f.Failures = append(f.Failures, e)
	}
	sort.Slice(f.Adapters, func(i, j int) bool { return f.Adapters[i].Path < f.Adapters[j].Path })
	sort.Slice(f.Failures, func(i, j int) bool { return f.Failures[i].Path < f.Failures[j].Path })
	b, _ := json.MarshalIndent(f, "", "  ")
	return append(b, '\n')
}

func (c *describeCache) equal(o *describeCache) bool {
	return bytes.Equal(c.encode(), o.encode())
}

// parseCache reads a cache file. Anything it cannot use is an error; the
// caller then starts from an empty cache.
func parseCache(b []byte) (*describeCache, error) {
	var f cacheFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parse %s: %w", CacheFile, err)
	}
	if f.Version != cacheVersion {
		return nil, fmt.Errorf("%s has version %d; want %d", CacheFile, f.Version, cacheVersion)
	}
	c := newCache()
	for _, e := range f.Adapters {
		if e.Path == "" || !filepath.IsAbs(e.Path) {
			continue
		}
		c.entries[e.Path] = e
	}
	for _, e := range f.Failures {
		if e.Path == "" || !filepath.IsAbs(e.Path) || e.Error == "" {
			continue
		}
		delete(c.entries, e.Path)
		c.failures[e.Path] = e
	}
	return c, nil
}

func (h *Host) cachePath() string { return filepath.Join(h.home, CacheFile) }

// loadCache reads the cache file; a missing or unreadable one is empty.
func (h *Host) loadCache() *describeCache {
	if h.home == "" {
		return newCache()
	}
	b, err := os.ReadFile(h.cachePath())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			h.log.Warn("could not read the adapter cache", "path", h.cachePath(), "error", err)
		}
		return newCache()
	}
	c, err := parseCache(b)
	if err != nil {
		h.log.Warn("ignoring the adapter cache", "path", h.cachePath(), "error", err)
		return newCache()
	}
	return c
}

// saveCache replaces the cache file atomically.
func (h *Host) saveCache(c *describeCache) error {
	if h.home == "" {
		return nil
	}
	if err := os.MkdirAll(h.home, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", h.home, err)
	}
	tmp, err := os.CreateTemp(h.home, CacheFile+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", h.cachePath(), err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(c.encode()); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), h.cachePath()); err != nil {
		return fmt.Errorf("replace %s: %w", h.cachePath(), err)
	}
	return nil
}
