// Package postgresadapter is binky-adapter-postgres (alias postgresql): a
// slice is one database on a PostgreSQL server the developer already runs,
// named names.Postgres(slice).
//
// provision creates the database (CREATE DATABASE; an existing one is
// fine). resolve answers the admin URL with the database replaced. With
// config owner_role = true, provision also creates a LOGIN role named after
// the slice that owns the database, CONNECT is revoked from PUBLIC on it, and
// resolve answers a URL holding that role's credentials, so one world cannot
// open another's database. The role's password is derived, not stored: an
// HMAC-SHA256 of the slice name keyed by a random secret kept in the table
// binky.adapter_secret of the admin database, sent to the server only as a
// SCRAM-SHA-256 verifier and set again on every resolve. destroy drops the
// database (WITH (FORCE) on 13+, else after terminating its connections),
// its test databases and the slice's role. With config test_databases =
// true the role may create the databases a test suite makes (CREATEDB)
// and destroy drops them (testdb.go).
//
// clone freezes the source (VACUUM (FREEZE), so a world's first reads
// rewrite no page), then runs CREATE DATABASE … TEMPLATE source after
// terminating whatever is connected to the source, retried while a
// straggler reconnects. On PostgreSQL 18+ it uses STRATEGY = FILE_COPY
// with file_copy_method = clone, so a reflink filesystem (Btrfs, XFS)
// shares the source's blocks; the server copies silently where it cannot,
// so the method says "clone requested" unless the clone's extents, read
// with FIEMAP in the server's data directory when that is here and
// readable, show "copy-on-write" or "copied" (cow.go). On 15 to 17 it
// takes the server's default (WAL_LOG) unless config clone_strategy says
// file_copy. With owner_role the clone's objects are handed from the
// source's role to the clone's.
//
// Each slice records which binky home owns it (sdk.Target.Claim) as its
// database's comment (COMMENT ON DATABASE, read with shobj_description),
// set when provision makes the database or adopts one that has no claim.
// Every verb first checks it and refuses another home's slice with code
// conflict, before the database or the role is touched; clone checks the
// source and the target, and records the cloning home's claim on the copy
// (TEMPLATE copies no comment). Reading the claim and then creating,
// claiming or dropping the database happen under an advisory lock keyed by
// the database name, so two homes cannot both take one slice.
//
// The adapter keeps one small connection pool per admin URL for as long as
// the process lives, so the RPC tier reuses it across a batch; a verb
// that finds the server full waits for a free connection (full.go). See
// docs/adapters.md for the config keys and the privileges the admin role
// needs.
package postgresadapter
