package world

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/binkyhq/binky/host/api"
	"github.com/binkyhq/binky/host/config"
)

// TestEngineErrorsKeepTheirCause: an engine error carries its api code
// for the wire and its cause for errors.Is and errors.As in the daemon,
// with the message it always had.
func TestEngineErrorsKeepTheirCause(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "binky.toml")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		is   error
	}{
		{"missing file", context.Background(), fs.ErrNotExist},
		{"canceled", canceled, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfigContext(tt.ctx, missing)
			var ae *api.Error
			if !errors.As(err, &ae) || ae.Code != api.CodeInvalid {
				t.Fatalf("LoadConfigContext: %v; want an api error coded %s", err, api.CodeInvalid)
			}
			_, _, direct := config.LoadContext(tt.ctx, missing)
			if ae.Message != direct.Error() {
				t.Errorf("message %q; want the config error's %q", ae.Message, direct.Error())
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false; want the cause seen through the api error", err, tt.is)
			}
			var le *config.LoadError
			if !errors.As(err, &le) || le.File != missing {
				t.Errorf("errors.As(*config.LoadError) = %v; want the load error of %s", le, missing)
			}
		})
	}
}
