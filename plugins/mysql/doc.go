// Package mysqladapter is binky-adapter-mysql (aliases mariadb, percona): a
// slice is one database (schema) on a MySQL-protocol server the developer
// already runs, named names.MySQL(slice).
//
// provision is CREATE DATABASE (one that exists is kept), destroy DROP
// DATABASE IF EXISTS. resolve answers mysql://user:password@host:port/<database> with
// the admin credentials, or with config owner_user those of a user of the
// slice's own granted its database alone (user.go), and values "database"
// and "dsn" (the same place as a go-sql-driver DSN). With config
// test_databases that user may create and drop the databases a test
// suite makes, and destroy drops them (testdb.go). A verb that finds the
// server full waits for a free connection (full.go). The admin URL is mysql://user:password@host:port/
// (or mariadb://), or a go-sql-driver DSN such as root@tcp(127.0.0.1:3306)/.
//
// clone runs on the server, with no client binary, on one connection with
// foreign-key checks off: each table's SHOW CREATE TABLE replayed in the
// new database (unlike CREATE TABLE … LIKE it keeps foreign keys and the
// AUTO_INCREMENT counter), its rows copied by INSERT … SELECT, then the
// routines, views and triggers re-created from their SHOW CREATE text with
// the source schema's name rewritten. Identifiers are quoted by quoteIdent,
// which validates the name and doubles backticks; nothing is pasted.
//
// Each slice records which binky home owns it (sdk.Target.Claim): as the
// database's comment where the server has schema comments (MariaDB 10.5+;
// CREATE DATABASE … COMMENT, ALTER DATABASE … COMMENT =), otherwise as
// the one row of the marker table _binky_owner inside the database (Oracle
// MySQL, Percona Server, older MariaDB). provision records it when it
// makes the database and adopts a database that has none; every verb
// refuses another home's slice with code conflict before changing
// anything; clone checks the source and the target and records the
// cloning home's claim on the copy (a source's marker table is not
// copied). Reading the claim and then creating, claiming or dropping the
// database happen under a GET_LOCK named after the database, so two homes
// cannot both take one slice.
package mysqladapter
