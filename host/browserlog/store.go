package browserlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/internal/shareopen"
)

// FileName is the browser log in a world's log directory; the older
// generation is FileName + ".1". Service logs end in .log, so no service
// name can take it.
const FileName = "browser.jsonl"

// The store's defaults.
const (
	// DefaultMaxFile is the size past which the log becomes the older
	// generation: a world keeps at most about twice this.
	DefaultMaxFile = 512 << 10
	// DefaultRate entries a second are recorded per world, after a burst
	// of DefaultBurst; more are counted and dropped.
	DefaultRate  = 10
	DefaultBurst = 50
)

// Store appends to the browser logs of a home's worlds. Its zero value
// uses the defaults; it is safe for concurrent use.
type Store struct {
	// MaxFile, Rate and Burst override the defaults when set.
	MaxFile     int64
	Rate, Burst float64
	// Now is time.Now when nil.
	Now func() time.Time

	mu     sync.Mutex
	worlds map[string]*bucket // by log directory
}

// bucket is one world's rate: tokens left, when they were counted, and
// the entries dropped since the last note.
type bucket struct {
	tokens  float64
	at      time.Time
	dropped int
}

// maxBuckets bounds the rate state kept; full buckets go first.
const maxBuckets = 1024

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Append records entries in the browser log of the world whose log
// directory is dir, within the world's rate; it reports how many it
// dropped. Entries without a time get now. Entries dropped are said in a
// note after the next entries recorded. A world whose directory is gone
// (removed) records nothing: Append never makes the directory.
func (s *Store) Append(dir string, entries []Entry) (dropped int, err error) {
	if len(entries) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	b := s.bucket(dir, now)
	var keep []Entry
	for _, e := range entries {
		if b.tokens < 1 {
			b.dropped++
			dropped++
			continue
		}
		b.tokens--
		if e.Time.IsZero() {
			e.Time = now
		}
		keep = append(keep, e)
	}
	if len(keep) == 0 {
		return dropped, nil
	}
	if b.dropped > 0 {
		note := Entry{Time: now, Kind: KindNote, Message: fmt.Sprintf("%d entries dropped: more than %g a second came from this world's pages", b.dropped, s.rate())}
		keep = append(keep, note)
		b.dropped = 0
	}
	return dropped, s.write(dir, keep)
}

// Note records Binky's own entry in dir's browser log, outside the rate.
func (s *Store) Note(dir string, e Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	return s.write(dir, []Entry{e})
}

// MarkUp records that the world came up: "since up" counts after it.
func (s *Store) MarkUp(dir string) error {
	return s.Note(dir, Entry{Kind: KindUp, Message: "up"})
}

// Forget drops the rate kept for dir (its world was removed).
func (s *Store) Forget(dir string) {
	s.mu.Lock()
	delete(s.worlds, dir)
	s.mu.Unlock()
}

func (s *Store) rate() float64 {
	if s.Rate > 0 {
		return s.Rate
	}
	return DefaultRate
}

func (s *Store) burst() float64 {
	if s.Burst > 0 {
		return s.Burst
	}
	return DefaultBurst
}

// bucket is dir's rate state, refilled to now; callers hold mu.
func (s *Store) bucket(dir string, now time.Time) *bucket {
	if s.worlds == nil {
		s.worlds = map[string]*bucket{}
	}
	b := s.worlds[dir]
	if b == nil {
		if len(s.worlds) >= maxBuckets {
			s.prune(now)
		}
		b = &bucket{tokens: s.burst(), at: now}
		s.worlds[dir] = b
		return b
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(s.burst(), b.tokens+dt*s.rate())
	}
	b.at = now
	return b
}

// prune forgets the worlds whose bucket would be full again (nothing
// recent), or all when none is; callers hold mu.
func (s *Store) prune(now time.Time) {
	for dir, b := range s.worlds {
		if b.dropped == 0 && b.tokens+now.Sub(b.at).Seconds()*s.rate() >= s.burst() {
			delete(s.worlds, dir)
		}
	}
	if len(s.worlds) >= maxBuckets {
		clear(s.worlds)
	}
}

// write appends entries to dir's log, rolling it first when it is past
// MaxFile; callers hold mu.
func (s *Store) write(dir string, entries []Entry) error {
	var buf []byte
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf = append(append(buf, b...), '\n')
	}
	path := filepath.Join(dir, FileName)
	max := s.MaxFile
	if max <= 0 {
		max = DefaultMaxFile
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && fi.Size()+int64(len(buf)) > max {
		// On Windows the older generation cannot be replaced while a
		// follower (binky logs --browser -f) still holds it: the entries
		// then go on into the current file, up to twice the bound, and the
		// roll is tried again at the next append.
		if err := os.Rename(path, path+".1"); err != nil && fi.Size()+int64(len(buf)) > 2*max {
			return fmt.Errorf("roll the browser log: %w", err)
		}
	}
	f, err := shareopen.Open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the world is gone
	}
	if err != nil {
		return fmt.Errorf("open the browser log: %w", err)
	}
	_, err = f.Write(buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write the browser log: %w", err)
	}
	return nil
}
