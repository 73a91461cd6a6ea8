// Package qdrant is binky-adapter-qdrant: a slice is the collection-name
// prefix "<slice>-" (names.IndexPrefix: slices hold no '-', so no slice's
// prefix starts another's names) on a Qdrant server reached over its REST
// API. admin_url is http://127.0.0.1:6333, with the API key, when the
// server has one, as the URL's password (http://:KEY@127.0.0.1:6333); it
// is sent in the api-key header.
//
// provision creates the collections config.collections names (each with
// its vector size and distance) with PUT /collections/<prefix><name>, and
// reports whether they all existed (with none configured: nothing, or,
// with an owner, whether any collection was under the prefix; see below).
// resolve answers the admin URL and values.prefix. destroy lists the
// collections (GET /collections) and deletes each whose name starts with
// the prefix, by name (the marker collection last).
//
// Owner claims: the slice's owner claim is the payload (binky_owner) of
// point 1 of the marker collection <prefix>binky-owner (vector size 1,
// Dot; config collections may not name it), written with wait=true.
// provision makes it before the configured collections, adopts a prefix
// with collections but no claim, and refuses with code conflict, like
// resolve and destroy, a slice another owner claimed. With an owner, a
// bare prefix exists by any collection under it (its marker, once
// provisioned).
//
// No credential fence: the slice is reached with the admin key, so
// nothing fences the marker from the application. clone is not offered.
//
// No Qdrant server could be installed where this was written: the adapter
// is tested against package apimodel, a model of the documented endpoints
// it uses, never against a real server.
package qdrant
