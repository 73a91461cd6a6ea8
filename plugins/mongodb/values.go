package mongoadapter

import (
	"net/url"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// resolved is Resolve's answer for database db: the address, and the
// values database, user and password (the admin URL's; the password
// listed secret), auth_source when the address has one, and host and
// port for a single-host mongodb:// URL (a mongodb+srv:// one gives its
// host only; a seed list of several hosts neither).
func (a *admin) resolved(db string) *sdk.ResolveResponse {
	res := &sdk.ResolveResponse{Address: a.sliceURL(db)}
	u, err := url.Parse(res.Address)
	if err != nil {
		res.SetValue(sdk.ValueDatabase, db)
		return res
	}
	if strings.Contains(u.Host, ",") {
		h := *u
		h.Host = ""
		res.SetConnParts(&h, "")
	} else {
		port := "27017"
		if u.Scheme == "mongodb+srv" {
			port = ""
		}
		res.SetConnParts(u, port)
	}
	if src := u.Query().Get("authSource"); src != "" {
		res.SetValue("auth_source", src)
	}
	res.SetValue(sdk.ValueDatabase, db)
	return res
}
