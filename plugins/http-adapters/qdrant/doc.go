// Package qdrant is binky-adapter-qdrant: a slice is the collection-name
// prefix "<slice>-" (names.IndexPrefix: slices hold no '-', so no slice's
// prefix starts another's names) on a Qdrant server reached over its REST
// API. admin_url is http://127.0.0.1:6333, with the API key, when the
// server has one, as the URL's password (http://:KEY@127.0.0.1:6333); it
// is sent in the api-key header.
//
// provision creates the collections config.collections names (each with
// its vector size and distance) with PUT /collections/<prefix><name>, and
// reports whether they all existed (nothing, when none are configured).
// resolve answers the admin URL and values.prefix. destroy lists the
// collections (GET /collections) and deletes each whose name starts with
// the prefix, by name. No credential fence: the slice is reached with the
// admin key. clone is not offered.
//
// No Qdrant server could be installed where this was written: the adapter
// is tested against package apimodel, a model of the documented endpoints
// it uses, never against a real server.
package qdrant
