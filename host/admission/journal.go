package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Journal records the worlds waiting in the queue in a file, so a daemon
// that restarts after a crash or a kill -9 knows who waited: their callers
// are gone with the old daemon, and each such world is then marked down
// with the reason instead of being left unspecified (issue 29). Data is
// the daemon's, opaque here (what it needs to record the world).
type Journal struct {
	Path string

	mu      sync.Mutex
	entries map[string]JournalEntry
}

// JournalEntry is one queued world.
type JournalEntry struct {
	Key   string          `json:"key"`
	Since time.Time       `json:"since"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// Add records key as queued (again: its Since is kept).
func (j *Journal) Add(key string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.entries == nil {
		j.entries = map[string]JournalEntry{}
	}
	e, ok := j.entries[key]
	if !ok {
		e = JournalEntry{Key: key, Since: time.Now()}
	}
	e.Data = b
	j.entries[key] = e
	return j.write()
}

// Remove forgets key (admitted, refused, or its caller left).
func (j *Journal) Remove(key string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.entries[key]; !ok {
		return nil
	}
	delete(j.entries, key)
	return j.write()
}

// write replaces the file whole (a temporary file renamed over it), so a
// crash leaves either the old list or the new one. j.mu held.
func (j *Journal) write() error {
	list := make([]JournalEntry, 0, len(j.entries))
	for _, e := range j.entries {
		list = append(list, e)
	}
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(j.Path), ".queue-*")
	if err != nil {
		return fmt.Errorf("record the admission queue: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record the admission queue: %w", errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), j.Path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record the admission queue: %w", err)
	}
	return nil
}

// Take reads what an earlier daemon left queued and empties the file: the
// callers of those waits are gone. A missing file is an empty queue.
func (j *Journal) Take() ([]JournalEntry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, err := os.ReadFile(j.Path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the recorded admission queue: %w", err)
	}
	var list []JournalEntry
	jerr := json.Unmarshal(b, &list)
	j.entries = map[string]JournalEntry{}
	if err := j.write(); err != nil {
		return nil, err
	}
	if jerr != nil {
		return nil, fmt.Errorf("read the recorded admission queue %s: %w", j.Path, jerr)
	}
	return list, nil
}
