// Package apimodel holds in-process models of the two HTTP APIs no real
// server of can be installed where binky is built and tested:
// Elasticsearch/OpenSearch (the index endpoints the elasticsearch adapter
// uses) and Qdrant (the collection endpoints the qdrant adapter uses).
// Each implements exactly those documented endpoints with the documented
// status codes and bodies, errors included ("index exists", "not found",
// auth failures), plus the few document endpoints an end-to-end test
// writes through. They are http.Handlers for httptest.Server.
//
// A test against a model proves the adapter speaks the API as documented;
// it is not a test against a real server, and is never called one.
package apimodel
