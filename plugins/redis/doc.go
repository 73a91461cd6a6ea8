// Package redisadapter is binky-adapter-redis (alias valkey): a slice is
// the key prefix names.RedisPrefix(slice), "<slice>:", on a Redis or Valkey
// server the developer already runs.
//
// Where the server has ACLs (Redis 6+, Valkey), provision creates an ACL
// user named after the slice, limited to the keys ~<prefix>* and the
// pub/sub channels &<prefix>*, with +@all -@admin -@dangerous +info, and a
// password; resolve answers redis://<slice>:<password>@host:port/<db> and
// values "prefix" and "user". The password is derived, not stored: an
// HMAC-SHA256 of the slice name keyed by a random secret kept in the key
// binky:adapter-secret (outside every slice's prefix, so no slice user can
// read it), and the user is re-set on every resolve, so a server restarted
// without its ACL file heals on the next `binky up`. Without ACLs (or with
// config acl = false) resolve answers the admin address and the prefix;
// the application must apply the prefix itself.
//
// destroy deletes the prefix's keys in every logical database with SCAN
// MATCH and UNLINK in batches, then the user (ACL DELUSER, which also
// disconnects it). clone is not offered: describe says clone:false and
// Clone answers code "unsupported", so the host builds each slice with
// provision, migrate and seed.
//
// Each slice's owner (the binky home that made or adopted it, see
// sdk.Target.Claim) is recorded in the key binky:claim:<slice> in logical
// database 0, outside every slice's prefix like the secret, so the
// slice's own user can neither read, forge nor delete it. provision sets
// it (adopting a slice that has keys or a user but no claim), and
// provision, resolve and destroy refuse with code "conflict" a slice
// another home claimed, before touching anything; destroy deletes the
// claim last.
package redisadapter
