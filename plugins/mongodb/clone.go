package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/binkyhq/binky/sdk"
)

// Clone copies every collection of the source slice's database, with its
// indexes, into the slice's database, server-side ($out into another
// database needs MongoDB 4.4). The target is dropped first. A server that
// cannot answers code unsupported: older MongoDB, FerretDB, or any server
// refusing $out.
//
// Both databases' claims are checked first: another owner's source is
// never read and another owner's target never dropped. The source's claim
// collection is not copied; the target gets the request's owner's claim
// as soon as it is dropped, before any data lands in it.
func (m *Mongo) Clone(ctx context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	op := fmt.Sprintf("clone mongodb slice %q from %q", req.Slice, req.Source)
	s, db, err := m.target(&req.Target, req.Source)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	src := req.Source // names.Postgres is the identity on slice names
	for _, d := range []string{src, db} {
		if err := s.checkClaim(ctx, d, &req.Target); err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
	}
	if err := canOut(ctx, s.client); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.client.Database(db).Drop(ctx); err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("drop target database %q: %w", db, err))
	}
	if err := s.claim(ctx, db, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	colls, err := s.client.Database(src).ListCollectionSpecifications(ctx, bson.D{{Key: "type", Value: "collection"}})
	if err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("list the collections of %q: %w", src, err))
	}
	for _, c := range colls {
		if strings.HasPrefix(c.Name, "system.") || c.Name == ownerColl {
			continue
		}
		if err := copyCollection(ctx, s.client, src, db, c.Name); err != nil {
			s.client.Database(db).Drop(ctx) // leave no half-made clone
			return nil, fail(op, req.AdminURL, err)
		}
	}
	return &sdk.CloneResponse{Method: "aggregate_out"}, nil
}

// canOut refuses, with code unsupported, a server that has no $out into
// another database: FerretDB (buildInfo names it) or MongoDB before 4.4.
func canOut(ctx context.Context, c *mongo.Client) error {
	var info bson.M
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return fmt.Errorf("read the server's buildInfo: %w", err)
	}
	if _, ok := info["ferretdbVersion"]; ok {
		return sdk.Errorf(sdk.CodeUnsupported, "the server is FerretDB %v, which has no $out stage; binky builds the slice with provision, migrate and seed", info["ferretdbVersion"])
	}
	v, _ := info["version"].(string)
	if !atLeast(v, 4, 4) {
		return sdk.Errorf(sdk.CodeUnsupported, "the server is MongoDB %q; a server-side copy into another database ($out with db) needs 4.4 or newer; binky builds the slice with provision, migrate and seed", v)
	}
	return nil
}

// atLeast reports whether version "X.Y…" is at least major.minor.
func atLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	x, err1 := strconv.Atoi(parts[0])
	y, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return x > major || x == major && y >= minor
}

// copyCollection copies src.coll into dst.coll with $out, then recreates
// its indexes (other than _id_, which $out makes).
func copyCollection(ctx context.Context, c *mongo.Client, src, dst, coll string) error {
	out := bson.D{{Key: "$out", Value: bson.D{{Key: "db", Value: dst}, {Key: "coll", Value: coll}}}}
	cur, err := c.Database(src).Collection(coll).Aggregate(ctx, mongo.Pipeline{out})
	if err != nil {
		if unsupportedStage(err) {
			return sdk.Errorf(sdk.CodeUnsupported, "copy %s.%s: the server refuses $out into another database: %v", src, coll, err)
		}
		return fmt.Errorf("copy %s.%s to %s.%s: %w", src, coll, dst, coll, err)
	}
	cur.Close(ctx)
	idx, err := c.Database(src).Collection(coll).Indexes().List(ctx)
	if err != nil {
		return fmt.Errorf("list the indexes of %s.%s: %w", src, coll, err)
	}
	var raw bson.A
	for idx.Next(ctx) {
		var doc, clean bson.D
		if err := bson.Unmarshal(idx.Current, &doc); err != nil {
			idx.Close(ctx)
			return fmt.Errorf("read an index of %s.%s: %w", src, coll, err)
		}
		skip := false
		for _, e := range doc {
			switch {
			case e.Key == "name" && e.Value == "_id_":
				skip = true
			case e.Key != "v" && e.Key != "ns":
				clean = append(clean, e)
			}
		}
		if !skip {
			raw = append(raw, clean)
		}
	}
	err = idx.Err()
	idx.Close(ctx)
	if err != nil {
		return fmt.Errorf("list the indexes of %s.%s: %w", src, coll, err)
	}
	if len(raw) == 0 {
		return nil
	}
	cmd := bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: raw}}
	if err := c.Database(dst).RunCommand(ctx, cmd).Err(); err != nil {
		return fmt.Errorf("create the indexes of %s.%s: %w", dst, coll, err)
	}
	return nil
}

// unsupportedStage: a server error meaning "no such pipeline stage or
// option" rather than a failure of the copy.
func unsupportedStage(err error) bool {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 40324, 115, 59, 238, 16436: // unrecognized stage, CommandNotSupported, CommandNotFound, NotImplemented, unknown stage option
			return true
		}
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, code := range []int{40324, 115, 59, 238, 16436} {
			if se.HasErrorCode(code) {
				return true
			}
		}
	}
	return false
}
