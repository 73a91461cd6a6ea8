package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/binkyhq/binky/host/adapter"
	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
	"github.com/binkyhq/binky/host/events"
	"github.com/binkyhq/binky/host/registry"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// goldenMarker is the file whose content says which migrate+seed built the
// template: golden/<adapter>/<project>_golden_<clone_from>.
func (d *Daemon) goldenMarker(svc *config.Service, golden string) string {
	return filepath.Join(d.home, "golden", svc.Adapter, golden)
}

// goldenHash covers the migrate and seed commands and the adapter and
// server identity (the admin URL without its credentials), so changing any
// of them rebuilds the template.
func goldenHash(svc *config.Service, adminURL string) string {
	h := sha256.New()
	for _, s := range []string{svc.Migrate, svc.Seed, svc.Adapter, serverIdentity(adminURL)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// serverIdentity is an admin URL reduced to scheme, host and port.
func serverIdentity(admin string) string {
	u, err := url.Parse(admin)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// goldenLock serializes template builds per marker inside this daemon; one
// daemon serves a BINKY_HOME, so this is the build-once lock.
func (d *Daemon) goldenLock(marker string) *sync.Mutex {
	return d.goldens.get(marker)
}

// sliceFromGolden builds the template once (or again when its hash changed),
// then clones it for the worktree. A failed or unsupported clone falls back
// to provision+migrate+seed, logging clone_fallback with the cause.
func (d *Daemon) sliceFromGolden(ctx context.Context, s *stream, w *world, rec *registry.Worktree, svc *config.Service, conn *adapter.Conn, name string) (slice, error) {
	golden := names.Golden(w.project, svc.CloneFrom)
	coords := w.coords()
	gt := d.target(w, svc, golden, coords)
	if err := d.ensureGolden(ctx, s, w, rec, svc, conn, gt); err != nil {
		return slice{}, err
	}
	t := d.target(w, svc, name, coords)
	s.progress("clone", svc.Name, golden+" → "+name)
	start := time.Now()
	res, err := conn.Clone(ctx, &sdk.CloneRequest{Target: t, Source: golden})
	if err != nil {
		cause := err.Error()
		if sdk.CodeOf(err) == sdk.CodeUnsupported {
			cause = "adapter does not support clone: " + cause
		}
		d.emit(events.Event{Event: events.CloneFallback, Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, Error: cause})
		s.progress("clone", svc.Name, "clone failed; building the slice the slow way (clone_fallback)")
		// A half-made clone must not be mistaken for a provisioned slice.
		conn.Destroy(ctx, &sdk.DestroyRequest{Target: t})
		return d.buildSlice(ctx, s, w, rec, svc, conn, name)
	}
	d.emit(events.Event{Event: events.SliceCloned, Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, Method: res.Method, DurationMS: time.Since(start).Milliseconds()})
	return d.resolveSlice(ctx, conn, svc, t)
}

// ensureGolden builds the template when its marker is missing or stale.
func (d *Daemon) ensureGolden(ctx context.Context, s *stream, w *world, rec *registry.Worktree, svc *config.Service, conn *adapter.Conn, gt sdk.Target) error {
	marker := d.goldenMarker(svc, gt.Slice)
	want := goldenHash(svc, gt.AdminURL)
	m := d.goldenLock(marker)
	if !m.TryLock() {
		s.progress("golden", svc.Name, "waiting: another up is building template "+gt.Slice)
		m.Lock()
	}
	defer m.Unlock()
	if b, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(b)) == want {
		return nil
	}
	start := time.Now()
	s.progress("golden", svc.Name, "building template "+gt.Slice)
	os.Remove(marker)
	if _, err := conn.Destroy(ctx, &sdk.DestroyRequest{Target: gt}); err != nil {
		return errorf(api.CodeFailed, "drop stale template %q for %s: %v", gt.Slice, svc.Name, err)
	}
	if _, err := conn.Provision(ctx, &sdk.ProvisionRequest{Target: gt}); err != nil {
		return errorf(api.CodeFailed, "provision template %q for %s: %v", gt.Slice, svc.Name, err)
	}
	sl, err := d.resolveSlice(ctx, conn, svc, gt)
	if err != nil {
		return err
	}
	if err := d.migrateAndSeed(ctx, s, w, rec, svc, sl); err != nil {
		return fmt.Errorf("build template %q: %w", gt.Slice, err)
	}
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(marker, []byte(want+"\n")); err != nil {
		return fmt.Errorf("write template marker: %w", err)
	}
	d.emit(events.Event{Event: events.GoldenBuilt, Project: rec.Project, Worktree: rec.Name, Service: svc.Name, Adapter: svc.Adapter, DurationMS: time.Since(start).Milliseconds()})
	s.progress("golden", svc.Name, fmt.Sprintf("template %s built in %.1fs", gt.Slice, time.Since(start).Seconds()))
	return nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
