// Package names derives every name binky gives a world from its branch:
// the worktree name (also its directory and DNS label), the slice name of
// each adapter service, the golden template's slice name, the proxied
// hostname, and each backend's spelling of a slice (PostgreSQL and MySQL
// databases, S3 buckets, Kafka topic prefixes, RabbitMQ vhosts, Redis key
// prefixes, Elasticsearch index prefixes). It lives in the sdk module and
// uses only the standard library, so the host and every adapter compute the
// same names without importing each other.
//
// Every function is a pure, deterministic function of its arguments and
// accepts any string: path traversal, shell metacharacters, NUL, invalid
// UTF-8, look-alike letters and 300-byte names all come out as valid,
// bounded names made only of [a-z0-9] and the backend's separators.
//
// # Why two branches never share a worktree name
//
// Worktree leaves a branch unchanged only when it is already a worktree
// name ([a-z0-9]+(-[a-z0-9]+)*, at most 63 bytes), does not end in '-' and
// six hex digits, and is not a Windows device name. Every other branch is
// hashed: its folded text, cut, then '-' and the first six hex digits of the
// SHA-256 of the branch as given. So:
//
//   - Two unchanged branches are their own names, and different.
//   - An unchanged branch never ends in '-' and six hex digits, and a hashed
//     name always does, so an unchanged branch never meets a hashed one. A
//     branch literally named feat-a-1b2c3d is therefore hashed too, and cannot
//     take the name of feat/a.
//   - Two hashed branches share a name only if their SHA-256 digests agree in
//     the first 24 bits (and their folded text agrees). For any one pair of
//     branches that is a chance of one in 16.7 million; folding only ever
//     makes such pairs among branches that differ in case or punctuation.
//
// Look-alike letters are not transliterated: a Cyrillic "а" is two bytes
// outside [a-z0-9], folded to '-', so "fаke" and "fake" stay apart.
//
// # Slice names
//
// A slice name is <project>_<worktree> with '-' written '_', 3 to 63 bytes
// of [a-z0-9_]. It is plain only when it can be read back: the project has
// no '-' (so the first '_' ends it), the worktree has the shape of a
// worktree name, and it does not start "golden-". A plain slice name never
// holds "__". Anything else is folded, cut to fit and given "__" and a hash
// of both inputs, so a hashed name never equals a plain one, and the hash
// (of the full inputs, not the cut text) keeps long names apart. Golden
// names, <project>_golden_<clone_from>, follow the same rules; a plain
// golden name cannot be a plain slice name because no plain slice's
// worktree starts "golden-", and hashed golden and slice names hash
// different inputs.
//
// # Backend names
//
// Each backend mapper is one-to-one over slice names (IsSlice), with the
// argument in its documentation: Postgres, MySQL and Vhost keep the slice;
// Bucket and KafkaPrefix write '_' as '-', which slices never hold;
// RedisPrefix and IndexPrefix end with a byte slices never hold, so no
// prefix can start another slice's keys. Where a backend reserves a name a
// slice can spell, the mapper marks it with a byte plain names never hold.
package names
