// Package mongoadapter is binky-adapter-mongodb: a slice is a database,
// names.Postgres(slice) (the slice name itself: [a-z0-9_], at most 63
// bytes, within MongoDB's 64), on a MongoDB-protocol server the developer
// already runs.
//
// admin_url is a mongodb:// (or mongodb+srv://) URL. provision checks that
// the server answers (MongoDB makes a database on its first write, so an
// empty slice cannot be told from a missing one: existed is not
// reported); resolve answers the admin URL with the slice's database as
// its path (authSource kept pointing at the admin URL's, so the same
// credentials work); destroy drops the database.
//
// clone copies every collection of the source database server-side with
// aggregate [{$out: {db, coll}}] and then its indexes, on MongoDB 4.4 or
// newer. Where the server cannot — older MongoDB, or FerretDB, which has
// no $out — Clone answers code "unsupported", and binky falls back to
// provision, migrate and seed.
//
// The adapter claims slices (describe says claims:true): the owner's claim
// (sdk.Target.Claim) is the one document {_id: "owner", claim: "..."} of
// the collection _binky_owner in the slice's database. provision records
// it, making the database, or adopting one that has no claim; provision,
// resolve, destroy and clone (of its source and its target) refuse a
// database another owner claimed with code conflict, touching nothing.
// The claim goes with the database when it is dropped, and clone never
// copies it: the target gets the cloning owner's. MongoDB has no comment
// on a database to hold it, and the slice's application uses the admin
// credentials, so it can see (and could drop) the collection.
package mongoadapter
