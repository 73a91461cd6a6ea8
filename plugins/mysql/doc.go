// Package mysqladapter is binky-adapter-mysql (aliases mariadb, percona): a
// slice is one database (schema) on a MySQL-protocol server the developer
// already runs, named names.MySQL(slice).
//
// provision is CREATE DATABASE IF NOT EXISTS, destroy DROP DATABASE IF
// EXISTS. resolve answers mysql://user:password@host:port/<database> with
// the admin credentials, and values "database" and "dsn" (the same place as
// a go-sql-driver DSN). The admin URL is mysql://user:password@host:port/
// (or mariadb://), or a go-sql-driver DSN such as root@tcp(127.0.0.1:3306)/.
//
// clone runs on the server, with no client binary, on one connection with
// foreign-key checks off: each table's SHOW CREATE TABLE replayed in the
// new database (unlike CREATE TABLE … LIKE it keeps foreign keys and the
// AUTO_INCREMENT counter), its rows copied by INSERT … SELECT, then the
// routines, views and triggers re-created from their SHOW CREATE text with
// the source schema's name rewritten. Identifiers are quoted by quoteIdent,
// which validates the name and doubles backticks; nothing is pasted.
package mysqladapter
