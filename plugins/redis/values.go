package redisadapter

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// Value keys Resolve answers beside the sdk's connection parts (user,
// password, host, port).
const (
	// ValuePrefix is the slice's key prefix, "<slice>:" (prefix mode).
	ValuePrefix = "prefix"
	// ValueNamespace is the prefix without its trailing ':', for a library
	// that adds the separator itself (BullMQ's prefix option, Sidekiq's
	// namespace): its keys become "<slice>:<queue>:…" (prefix mode).
	ValueNamespace = "namespace"
	// ValueDB is the logical database the address names.
	ValueDB = "db"
)

// resolved is the reply of Resolve: addr, the connection parts of addr
// (user and password are the slice user's with ACLs, the admin's
// without; the password listed secret), db, and in prefix mode prefix and
// namespace.
func resolved(addr string, db int, prefix string) *sdk.ResolveResponse {
	res := &sdk.ResolveResponse{Address: addr}
	if u, err := url.Parse(addr); err == nil {
		res.SetConnParts(u, "6379")
		if u.Scheme == "unix" {
			res.SetValue("socket", u.Path)
		}
		if pw := u.Query().Get("password"); pw != "" && res.Values[sdk.ValuePassword] == "" {
			res.SetSecret(sdk.ValuePassword, pw)
		}
	}
	res.SetValue(ValueDB, strconv.Itoa(db))
	if prefix != "" {
		res.SetValue(ValuePrefix, prefix)
		res.SetValue(ValueNamespace, strings.TrimSuffix(prefix, ":"))
	}
	return res
}
