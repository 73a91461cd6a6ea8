package postgresadapter

import (
	"strconv"

	"github.com/binkyhq/binky/sdk"
)

// setConnValues sets the resolve values a framework builds its own URL
// from: user and password (a secret; the slice role's with owner_role,
// else the admin connection's as pgx reads it, a password= parameter or
// a passfile included), host (a name, an address or a socket directory)
// and port of the server the admin connects to, and database.
func setConnValues(res *sdk.ResolveResponse, s *server, db, user, pw string) {
	cc := s.pool.Config().ConnConfig
	if user == "" {
		user, pw = cc.User, cc.Password
	}
	res.SetValue(sdk.ValueUser, user)
	res.SetSecret(sdk.ValuePassword, pw)
	res.SetValue(sdk.ValueHost, cc.Host)
	res.SetValue(sdk.ValuePort, strconv.Itoa(int(cc.Port)))
	res.SetValue(sdk.ValueDatabase, db)
}
