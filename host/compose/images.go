package compose

import (
	"regexp"
	"strings"
	"sync"
)

// images maps an image's repository (registry and tag stripped) onto the
// adapter name binky.toml should say. Names that an adapter answers as an
// alias (mariadb, valkey, opensearch…) keep that name: it reads as the
// server the project runs.
var images = map[string]string{
	"postgres":                         "postgres",
	"library/postgres":                 "postgres",
	"bitnami/postgresql":               "postgresql",
	"postgis/postgis":                  "postgres",
	"timescale/timescaledb":            "postgres",
	"timescale/timescaledb-ha":         "postgres",
	"pgvector/pgvector":                "postgres",
	"supabase/postgres":                "postgres",
	"mysql":                            "mysql",
	"mysql/mysql-server":               "mysql",
	"bitnami/mysql":                    "mysql",
	"mariadb":                          "mariadb",
	"bitnami/mariadb":                  "mariadb",
	"percona":                          "percona",
	"percona/percona-server":           "percona",
	"redis":                            "redis",
	"bitnami/redis":                    "redis",
	"redis/redis-stack":                "redis",
	"redis/redis-stack-server":         "redis",
	"valkey/valkey":                    "valkey",
	"bitnami/valkey":                   "valkey",
	"mongo":                            "mongodb",
	"mongodb/mongodb-community-server": "mongodb",
	"bitnami/mongodb":                  "mongodb",
	"minio/minio":                      "minio",
	"bitnami/minio":                    "minio",
	"localstack/localstack":            "s3",
	"redpandadata/redpanda":            "redpanda",
	"vectorized/redpanda":              "redpanda",
	"apache/kafka":                     "kafka",
	"bitnami/kafka":                    "kafka",
	"confluentinc/cp-kafka":            "kafka",
	"wurstmeister/kafka":               "kafka",
	"rabbitmq":                         "rabbitmq",
	"bitnami/rabbitmq":                 "rabbitmq",
	"clickhouse/clickhouse-server":     "clickhouse",
	"yandex/clickhouse-server":         "clickhouse",
	"clickhouse":                       "clickhouse",
	"bitnami/clickhouse":               "clickhouse",
	"elasticsearch":                    "elasticsearch",
	"elasticsearch/elasticsearch":      "elasticsearch",
	"bitnami/elasticsearch":            "elasticsearch",
	"opensearchproject/opensearch":     "opensearch",
	"bitnami/opensearch":               "opensearch",
	"qdrant/qdrant":                    "qdrant",
	"keinos/sqlite3":                   "sqlite",
}

// interpolation matches compose's ${VAR}, ${VAR:-default} and $VAR.
var interpolation = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`) })

// Repository returns image's repository path without registry, tag or
// digest, lowercased: "docker.io/library/postgres:16-alpine" → "postgres",
// "ghcr.io/bitnami/redis@sha256:…" → "bitnami/redis".
func Repository(image string) string {
	s := strings.ToLower(strings.TrimSpace(image))
	if i := strings.IndexByte(s, '@'); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, "/")
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") {
		parts = parts[1:]
	}
	last := parts[len(parts)-1]
	if i := strings.IndexByte(last, ':'); i >= 0 {
		parts[len(parts)-1] = last[:i]
	}
	repo := strings.Join(parts, "/")
	return strings.TrimPrefix(repo, "library/")
}

// AdapterFor returns the adapter that serves image, or "" when none does.
// Interpolated parts (postgres:${PG_VERSION:-16}) are ignored.
func AdapterFor(image string) string {
	image = interpolation().ReplaceAllString(image, "")
	repo := Repository(image)
	if a, ok := images[repo]; ok {
		return a
	}
	// Mirrors and private registries keep the upstream path under a
	// prefix of their own: ecr.aws/docker/library/postgres, myorg/mirror/redis.
	for i := strings.IndexByte(repo, '/'); i >= 0; i = strings.IndexByte(repo, '/') {
		repo = repo[i+1:]
		if a, ok := images[repo]; ok {
			return a
		}
	}
	return ""
}
