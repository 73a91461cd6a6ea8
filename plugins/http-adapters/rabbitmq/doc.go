// Package rabbitmq is binky-adapter-rabbitmq: a slice is a RabbitMQ
// virtual host, names.Vhost(slice), made through the HTTP management API
// (admin_url is that API, with an administrator's credentials:
// http://guest:guest@127.0.0.1:15672).
//
// provision creates the vhost (PUT /api/vhosts/<v>) and gives full
// permissions on it to one user: the admin URL's user by default, another
// existing user named by config user, or — with config user = "per-slice"
// — a user of its own, named after the slice, with no tags (so it cannot
// use the management API) and a derived password. The password is an
// HMAC-SHA256 of the user name keyed by a random secret kept in the
// server's global parameter binky-adapter-secret (readable by
// administrators only), so resolve is idempotent and the same from every
// adapter process; resolve re-sets the user and its permissions, so a
// server that lost them heals on the next `binky up`.
//
// resolve answers amqp://user:password@host:port/<vhost> (amqp_port from
// config, default 5672; host from config amqp_host, default the admin
// URL's) and values vhost and user. destroy deletes the vhost and, with
// user = "per-slice", its user. clone is not offered.
//
// Owner claims: the vhost's description is the owner claim (PUT
// /api/vhosts/<v> with description; without an owner it is "binky slice
// <slice>"). provision refuses with code conflict, like resolve and
// destroy, a vhost another owner claimed, before anything is touched, and
// adopts a vhost with no claim in its description by rewriting the
// description (its tags are sent back and kept), which needs RabbitMQ 3.9
// or later; it reads the vhost back and refuses when the claim did not
// stick. Only administrators can change a vhost's description; the
// per-slice users have no tags and cannot reach the management API.
package rabbitmq
