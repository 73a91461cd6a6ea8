package mysqladapter

import (
	"net"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// resolve is the slice's resolve answer: its address (in config.scheme
// when set) and the values database, dsn, user, password (listed secret;
// the dsn's copy of it the host finds in the dsn), and host and port for
// TCP or socket for a Unix socket, so a framework can build the URL it
// wants from parts.
func (a *admin) resolve(db string, c config) *sdk.ResolveResponse {
	addr := a.sliceURL(db)
	if c.scheme != "" {
		// sliceURL always writes "<scheme>://": swap the scheme alone.
		_, rest, _ := strings.Cut(addr, "://")
		addr = c.scheme + "://" + rest
	}
	res := &sdk.ResolveResponse{Address: addr}
	res.SetValue(sdk.ValueDatabase, db)
	res.SetValue("dsn", a.sliceDSN(db))
	res.SetValue(sdk.ValueUser, a.cfg.User)
	res.SetSecret(sdk.ValuePassword, a.cfg.Passwd)
	if a.cfg.Net == "unix" {
		res.SetValue("socket", a.cfg.Addr)
		return res
	}
	if host, port, err := net.SplitHostPort(a.cfg.Addr); err == nil {
		res.SetValue(sdk.ValueHost, host)
		res.SetValue(sdk.ValuePort, port)
	}
	return res
}
