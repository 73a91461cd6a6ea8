package logview

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/binkyhq/binky/host/redact"
	"github.com/binkyhq/binky/host/registry"
)

// Redactor knows every secret the registry in home records: the ${env.*}
// values of every world and the passwords in every adapter service's
// address and values (slice passwords the adapters made).
//
// It opens $BINKY_HOME/binky.db itself rather than asking the daemon: the
// registry is WAL, made for several processes at once, and a binary of the
// same version opening it only reads; reading logs then needs no daemon
// call.
func Redactor(ctx context.Context, home string) (*redact.Redactor, error) {
	reg, err := registry.Open(ctx, filepath.Join(home, registry.FileName))
	if err != nil {
		return nil, fmt.Errorf("read the secrets to redact: %w", err)
	}
	defer reg.Close()
	return RedactorOf(ctx, reg)
}

// Secrets is what a redactor is built from: the registry's worlds and
// their services.
type Secrets interface {
	Worktrees(ctx context.Context) ([]*registry.Worktree, error)
	Services(ctx context.Context, worktreeID int64) ([]*registry.Service, error)
}

// RedactorOf is Redactor over a registry the caller opened (one opened
// with registry.OpenReadOnly, where nothing can be written).
func RedactorOf(ctx context.Context, reg Secrets) (*redact.Redactor, error) {
	wts, err := reg.Worktrees(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the secrets to redact: %w", err)
	}
	red := redact.New()
	for _, wt := range wts {
		for _, s := range wt.Secrets {
			red.Add(s)
		}
		svcs, err := reg.Services(ctx, wt.ID)
		if err != nil {
			return nil, fmt.Errorf("read the secrets to redact: %w", err)
		}
		for _, s := range svcs {
			red.AddAddress(s.Address)
			for k, v := range s.Values {
				red.AddAddress(v)
				if strings.Contains(strings.ToLower(k), "password") {
					red.Add(v) // a password value, as the daemon's redactSlice
				}
			}
		}
	}
	return red, nil
}

var _ Secrets = (*registry.Registry)(nil)
