package doctor

import (
	"context"
	"crypto/x509"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/binkyhq/binky/host/certs"
)

// checkCA looks for the local CA and whether this machine trusts it.
func checkCA(ctx context.Context, e *Env) []Finding {
	dir := filepath.Join(e.Home, "certs")
	ca, err := certs.LoadCA(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Finding{ok("no local CA yet: https is optional (binky trust makes and installs one)")}
	}
	if err != nil {
		return []Finding{fail("mv "+dir+" "+dir+".broken && binky trust", "the local CA in %s cannot be read: %v", dir, err)}
	}
	if time.Now().After(ca.Cert.NotAfter) {
		return []Finding{fail("binky trust --uninstall && mv "+dir+" "+dir+".expired && binky trust", "the local CA expired on %s", ca.Cert.NotAfter.Format(time.DateOnly))}
	}
	if _, err := ca.Cert.Verify(x509.VerifyOptions{}); err != nil {
		return []Finding{warn("binky trust", "the local CA (%s) is not trusted by this machine: browsers will warn on https URLs", ca.CertPath)}
	}
	return []Finding{ok("the local CA is present and trusted (%s)", ca.CertPath)}
}
