// Package clickhouse is binky-adapter-clickhouse: a slice is a ClickHouse
// database, names.MySQL(slice) (the slice itself; information_schema gets
// a trailing '_'), made over the HTTP interface (admin_url is that
// interface with credentials: http://default:@127.0.0.1:8123).
//
// provision runs CREATE DATABASE IF NOT EXISTS (with config engine, when
// set) after looking the name up in system.databases, so it reports
// whether the slice existed; resolve answers the admin URL with
// database=<name> in its query (ClickHouse's HTTP interface reads the
// current database from there) and value database; destroy runs DROP
// DATABASE IF EXISTS. The slice is reached with the admin URL's
// credentials: users are defined in the server's users.xml on the
// versions this supports, not over SQL.
//
// Owner claims: ClickHouse 18.16 has no database comment, so the claim of
// database <db> is a view _binky_owners.<db> (AS SELECT '<claim>' AS
// claim), made in one statement in the database _binky_owners, which no
// slice name maps to. provision records it before it creates the
// database, adopts a database that has none, and refuses with code
// conflict, like resolve and destroy, a database another owner claimed;
// destroy drops the database, then its claim. The slice is reached with
// the admin URL's credentials, so nothing fences the claim from the
// application; it lives outside the slice's database, where the
// application's own tables (and a reset that drops them) do not reach.
//
// Only statements ClickHouse 18.16 already parses are used (no SHOW
// DATABASES LIKE, no EXISTS DATABASE): the adapter supports ClickHouse
// 18.16 and later; it is tested against 18.16.1 (Debian 12's package).
//
// clone is not offered: the only copy is INSERT … SELECT per table, which
// is O(rows), so the host builds each slice with provision, migrate and
// seed.
package clickhouse
