package config

import "slices"

// CommonValues are the connection parts every product adapter returns from
// resolve where its backend has them (${db.user}, ${db.password}…), on top
// of the address ${db.url}. A token may name them on any adapter service.
var CommonValues = []string{"user", "password", "host", "port", "database", "bucket", "db", "namespace"}

// adapterValues are the further values each product adapter returns, by
// implementation; aliases map onto these names through adapterImpl.
// (docs/adapters.md, "Connection values").
var adapterValues = map[string][]string{
	"postgres":      {"dsn"},
	"mysql":         {"dsn", "socket"},
	"redis":         {"prefix", "socket"},
	"mongodb":       {"auth_source"},
	"s3":            {"region", "endpoint", "access_key", "secret_key"},
	"kafka":         {"prefix", "bootstrap"},
	"rabbitmq":      {"vhost"},
	"clickhouse":    nil,
	"elasticsearch": {"prefix"},
	"qdrant":        {"prefix"},
	"sqlite":        {"path"},
}

// adapterImpl maps the product adapters' aliases onto their
// implementation.
var adapterImpl = map[string]string{
	"postgresql": "postgres", "mariadb": "mysql", "percona": "mysql",
	"valkey": "redis", "minio": "s3", "redpanda": "kafka", "opensearch": "elasticsearch",
}

// AdapterValues returns the value names a ${svc.<key>} token may use on a
// service of adapter (besides url): the common connection parts plus what
// that adapter is known to return. sure reports that adapter is one of
// binky's own, whose values are known; for any other adapter the list is
// CommonValues and a name outside it may still be one the adapter returns.
func AdapterValues(adapter string) (names []string, sure bool) {
	impl := adapter
	if a, ok := adapterImpl[adapter]; ok {
		impl = a
	}
	extra, sure := adapterValues[impl]
	names = append(slices.Clone(CommonValues), extra...)
	return names, sure
}
