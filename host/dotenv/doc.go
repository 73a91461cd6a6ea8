// Package dotenv reads env files (KEY=value lines, as docker compose and
// most dotenv libraries take them) and writes KEY='value' lines a POSIX shell
// can eval safely.
package dotenv
