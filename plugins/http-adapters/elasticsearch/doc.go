// Package elasticsearch is binky-adapter-elasticsearch, alias opensearch:
// a slice is the index-name prefix names.IndexPrefix(slice), "<slice>-",
// on an Elasticsearch or OpenSearch cluster reached over its REST API
// (admin_url: http://elastic:pw@127.0.0.1:9200).
//
// provision creates the indices config.indices names (each under the
// prefix, with optional settings and mappings) with PUT /<index>, and
// reports whether they all existed (with config.indices empty: nothing
// for a caller with no owner; with an owner, whether any index was under
// the prefix — its marker, once provisioned).
// resolve answers the admin URL and values.prefix; the application puts
// the prefix before every index name it uses. destroy lists the indices
// under the prefix (GET /_cat/indices/<prefix>*) and deletes each by its
// concrete name (DELETE /<index>), never a wildcard: the prefix is
// checked to be non-empty and free of wildcards and commas, and every
// listed name is checked to start with it before it is deleted.
//
// Owner claims: the slice's owner claim is the _meta.binky_owner of the
// mapping of the marker index <prefix>binky-owner (hidden, one shard, a
// strict mapping; config indices may not name it). provision makes it
// before the configured indices, adopts a prefix with indices but no
// marker (or a marker with no claim, through PUT /<index>/_mapping), and
// refuses with code conflict, like resolve and destroy, a slice another
// owner claimed; destroy deletes the marker last.
//
// No credential fence: a slice is reached with the admin URL's
// credentials. clone is not offered.
//
// No Elasticsearch or OpenSearch server could be installed where this was
// written: the adapter is tested against package apimodel, a model of the
// documented endpoints it uses, never against a real server.
package elasticsearch
