package names

import "strings"

// Each mapper below takes a slice name (see IsSlice) and returns the name
// of that slice on one backend. Over slice names each is injective: two
// different slices never get the same backend name, and where a backend
// takes a prefix, no slice's prefix is a prefix of another's keys. Given a
// string that is not a slice name, a mapper first makes one from it (folded
// and hashed), so any input yields a valid backend name.

// Postgres returns the database name of a slice: the slice itself, at most
// 63 bytes (NAMEDATALEN-1). Drivers must still quote it. It suits any
// backend taking [a-z0-9_] identifiers of 63 bytes or more (ClickHouse,
// MongoDB, Qdrant collections).
func Postgres(slice string) string {
	return canon(slice)
}

// MySQL returns the database (schema) name of a slice: the slice itself
// (64 bytes allowed, at most 63 used), except that the two system schema
// names a slice can spell, information_schema and performance_schema, get a
// trailing '_', which no slice name ends with.
func MySQL(slice string) string {
	s := canon(slice)
	if s == "information_schema" || s == "performance_schema" {
		return s + "_"
	}
	return s
}

// Bucket returns the S3 bucket name of a slice: the slice with '_' written
// '-' (slices hold no '-', so this is one-to-one), which is 3 to 63 bytes of
// [a-z0-9-] starting and ending with a letter or digit, never IP-shaped and
// never holding "..". When that would hit a name S3 reserves (starting
// xn--, sthree- or amzn-s3-demo-; ending -s3alias, --ol-s3, --x-s3 or
// --table-s3) it is wrapped as "x.<name>.x" instead; only such names
// contain '.', so they cannot meet a plain one. A wrapped name past 63
// bytes is cut and hashed.
func Bucket(slice string) string {
	s := canon(slice)
	b := replaceByte(s, '_', '-')
	if !bucketReserved(b) {
		return b
	}
	if w := "x." + b + ".x"; len(w) <= MaxSlice {
		return w
	}
	return "x." + cut(b, MaxSlice-5-hashLen, '-') + "-" + digest("bucket", s) + ".x"
}

// bucketReserved reports whether a name of [a-z0-9-] is one S3 refuses for
// a general purpose bucket.
func bucketReserved(b string) bool {
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(b, p) {
			return true
		}
	}
	for _, p := range []string{"-s3alias", "--ol-s3", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(b, p) {
			return true
		}
	}
	return false
}

// KafkaPrefix returns the topic prefix of a slice: the slice with '_'
// written '-', then '.'. It is at most 64 bytes of [a-z0-9.-], leaving 185
// of Kafka's 249 for the topic. Because the prefix holds no '_' or '.'
// before its final '.', no topic under one prefix can equal, or collide
// under Kafka's '.'/'_' metric-name rule with, a topic under another.
func KafkaPrefix(slice string) string {
	return replaceByte(canon(slice), '_', '-') + "."
}

// Vhost returns the RabbitMQ virtual host of a slice: the slice itself.
func Vhost(slice string) string {
	return canon(slice)
}

// RedisPrefix returns the key prefix of a slice: the slice, then ':'.
// Slices hold no ':', so one slice's prefix never starts another's keys.
func RedisPrefix(slice string) string {
	return canon(slice) + ":"
}

// IndexPrefix returns the index-name prefix of a slice for Elasticsearch or
// OpenSearch: the slice, then '-'. Slices hold no '-', so one slice's
// prefix never starts another's indices; the slice starts with a letter or
// digit as index names must, and leaves 191 of their 255 bytes.
func IndexPrefix(slice string) string {
	return canon(slice) + "-"
}
