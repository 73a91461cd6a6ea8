package world

import (
	"strings"
	"testing"

	"github.com/binkyhq/binky/host/redact"
)

// TestRedactSliceSecretValues: a value the adapter listed in secret, or
// one whose key names a password (a slice read back from the registry),
// is masked whole; other values are not; short values never.
func TestRedactSliceSecretValues(t *testing.T) {
	d := &Engine{redact: redact.New()}
	d.redactSlice(slice{
		Address: "mysql2://app@127.0.0.1:3306/acme_main",
		Values:  map[string]string{"password": "pw-from-values", "token": "tok-listed-1", "database": "acme_main", "user": "app"},
	}, "token")
	d.redactSlice(slice{Values: map[string]string{"admin_password": "second-pw-x", "short_password": "abc"}})
	got := d.redact.String("pw-from-values tok-listed-1 second-pw-x acme_main app abc")
	for _, secret := range []string{"pw-from-values", "tok-listed-1", "second-pw-x"} {
		if strings.Contains(got, secret) {
			t.Errorf("redacted %q still holds %q", got, secret)
		}
	}
	for _, plain := range []string{"acme_main", "app", "abc"} {
		if !strings.Contains(got, plain) {
			t.Errorf("redacted %q lost the non-secret %q", got, plain)
		}
	}
}
