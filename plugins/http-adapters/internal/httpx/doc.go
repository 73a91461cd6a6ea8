// Package httpx is the one HTTP helper the four HTTP adapters share
// (rabbitmq, clickhouse, elasticsearch, qdrant): it parses an admin URL
// into an endpoint and its basic-auth credentials, sends requests with a
// context and JSON bodies over net/http, classifies failures into the
// sdk's reply codes (unreachable, auth, invalid, conflict, internal), and
// scrubs every credential of the admin URL out of every error it returns.
//
// Its errors are one line: a server's reply body is cut to its first
// 300 bytes with runs of whitespace folded to one space.
package httpx
