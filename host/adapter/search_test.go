package adapter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchOrder: PATH, then $BINKY_HOME/adapters, then the system
// directory; each Info says where it came from.
func TestSearchOrder(t *testing.T) {
	path, home, system := t.TempDir(), t.TempDir(), t.TempDir()
	homeDir := filepath.Join(home, "adapters")
	if err := os.MkdirAll(homeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	inHome := installFake(t, homeDir, "ok")
	inSystem := installFake(t, system, "ok")
	systemOnly := installFake(t, system, "alias")
	inPath := installFake(t, path, "rpc")
	h, _ := testHost(t, Options{Home: home, SystemDirs: []string{system}}, path)

	tests := []struct {
		name, path, origin string
	}{
		{"fake-ok", inHome, OriginHome}, // home before system
		{"fake-alias", systemOnly, OriginSystem},
		{"fakealias", systemOnly, OriginSystem},
		{"fake-rpc", inPath, OriginPath},
	}
	for _, tt := range tests {
		info, err := h.Find(t.Context(), tt.name)
		if err != nil {
			t.Errorf("find %s: %v", tt.name, err)
			continue
		}
		if info.Path != tt.path || info.Origin != tt.origin {
			t.Errorf("find %s: got %s (%s); want %s (%s)", tt.name, info.Path, info.Origin, tt.path, tt.origin)
		}
	}
	infos, err := h.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		if i.Path == inSystem && (i.ShadowedBy != inHome || i.Origin != OriginSystem) {
			t.Errorf("system copy of fake-ok: got shadowed by %q, origin %q; want %q, system", i.ShadowedBy, i.Origin, inHome)
		}
	}
}

// TestCallerPath: a call whose context carries the caller's PATH searches
// it, not the host's own (the daemon's PATH is whichever shell started
// it): an adapter installed on the caller's PATH after the host was made is
// found, and the not-found error names every directory searched.
func TestCallerPath(t *testing.T) {
	daemonPath, callerPath, home, system := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	h, _ := testHost(t, Options{Home: home, SystemDirs: []string{system}}, daemonPath)

	_, err := h.Find(WithCallerPath(t.Context(), callerPath), "fake-ok")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("before install: got %v; want ErrNotFound", err)
	}
	for _, w := range []string{callerPath, filepath.Join(home, "adapters"), system} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("not-found error %q: want it to name %s", err, w)
		}
	}
	if strings.Contains(err.Error(), daemonPath) {
		t.Errorf("not-found error %q names the host's PATH %s; want only the caller's", err, daemonPath)
	}

	bin := installFake(t, callerPath, "ok") // installed after the host started
	ctx := WithCallerPath(t.Context(), callerPath)
	info, err := h.Find(ctx, "fake-ok")
	if err != nil {
		t.Fatalf("after install, on the caller's PATH: %v", err)
	}
	if info.Path != bin || info.Origin != OriginPath {
		t.Errorf("found %s (%s); want %s (PATH)", info.Path, info.Origin, bin)
	}
	c, err := h.Open(ctx, "fake-ok")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := h.Find(t.Context(), "fake-ok"); !errors.Is(err, ErrNotFound) {
		t.Errorf("without the caller's PATH: got %v; want ErrNotFound (the host's PATH does not have it)", err)
	}
}
