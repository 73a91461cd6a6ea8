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
// ignored (and rewritten).
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

type cacheEntry struct {
	Path     string               `json:"path"`
	Size     int64                `json:"size"`
	MtimeNS  int64                `json:"mtime_ns"`
	Describe sdk.DescribeResponse `json:"describe"`
}

type cacheFile struct {
	Version  int          `json:"version"`
	Adapters []cacheEntry `json:"adapters"`
}

// describeCache maps a binary's path to its last describe.
type describeCache struct {
	entries map[string]cacheEntry
}

func newCache() *describeCache { return &describeCache{entries: map[string]cacheEntry{}} }

// lookup returns the cached describe of key, or nil when the binary is new
// or changed.
func (c *describeCache) lookup(k cacheKey) *sdk.DescribeResponse {
	e, ok := c.entries[k.Path]
	if !ok || e.Size != k.Size || e.MtimeNS != k.MtimeNS {
		return nil
	}
	d := e.Describe
	d.Aliases = append([]string(nil), d.Aliases...)
	return &d
}

func (c *describeCache) store(k cacheKey, d *sdk.DescribeResponse) {
	c.entries[k.Path] = cacheEntry{Path: k.Path, Size: k.Size, MtimeNS: k.MtimeNS, Describe: *d}
}

// encode renders the cache deterministically (entries sorted by path).
func (c *describeCache) encode() []byte {
	f := cacheFile{Version: cacheVersion, Adapters: []cacheEntry{}}
	for _, e := range c.entries {
		f.Adapters = append(f.Adapters, e)
	}
	sort.Slice(f.Adapters, func(i, j int) bool { return f.Adapters[i].Path < f.Adapters[j].Path })
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
