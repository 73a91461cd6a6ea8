//go:build windows

package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/config"
)

// TestStopSignalNoteWindows: check says what a stop_signal without a
// Windows meaning becomes; SIGTERM, SIGINT and SIGKILL need no note.
func TestStopSignalNoteWindows(t *testing.T) {
	for _, tc := range []struct {
		sig  string
		note bool
	}{
		{"SIGTERM", false}, {"SIGINT", false}, {"SIGKILL", false},
		{"SIGHUP", true}, {"SIGQUIT", true}, {"USR1", true}, {"SIGUSR2", true},
	} {
		t.Run(tc.sig, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "binky.toml")
			src := "[project]\nname = \"p\"\n[services.a]\ncmd = \"serve\"\nstop_signal = \"" + tc.sig + "\"\n"
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, ds, err := config.Load(path)
			if err != nil || ds.HasErrors() {
				t.Fatalf("Load: %v %v", err, ds)
			}
			var notes []string
			for _, d := range ds {
				if d.Severity == config.SeverityNote && strings.Contains(d.Message, "stop_signal") {
					notes = append(notes, d.Message)
				}
			}
			switch {
			case tc.note && (len(notes) != 1 || !strings.Contains(notes[0], "CTRL_BREAK_EVENT")):
				t.Errorf("notes %q; want one saying binky sends CTRL_BREAK_EVENT", notes)
			case !tc.note && len(notes) > 0:
				t.Errorf("notes %q; want none", notes)
			}
		})
	}
}
