package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/binkyhq/binky/sdk"
)

// ownerColl is the collection, in each slice's database, that records
// which binky home owns the slice: one document, {_id: "owner", claim:
// "<claim text>"}. MongoDB keeps no comment or other free-text metadata on
// a database, and the adapter makes no users whose customData could hold
// it, so the claim lives beside the slice's data and goes with it when the
// database is dropped. The slice's application reaches the database with
// the admin URL's own credentials, so it can see the collection; its name
// starts with '_' to keep it out of the way, and clone never copies it.
const ownerColl = "_binky_owner"

// ownerID is the _id of the one claim document: a fixed _id makes
// recording the claim a single insert that the second of two racing homes
// loses with a duplicate key.
const ownerID = "owner"

// claimDoc is the claim document as written.
type claimDoc struct {
	ID    string `bson:"_id"`
	Claim string `bson:"claim"`
}

// recorded is what readClaim found in a slice's database.
type recorded struct {
	// text is the claim field when it is a string, else "".
	text string
	// match selects the claim document exactly as it was read (nil when
	// there was none), so that replacing something that is not a claim
	// replaces only what was read.
	match bson.D
}

// what names the database db and its server in a refusal.
func (s *server) what(db string) string {
	return fmt.Sprintf("database %q on %s", db, strings.Join(s.admin.cs.Hosts, ","))
}

// readClaim returns the claim document recorded in database db. It
// creates nothing: reading a database that does not exist finds no
// document.
func (s *server) readClaim(ctx context.Context, db string) (recorded, error) {
	var doc bson.D
	err := s.client.Database(db).Collection(ownerColl).FindOne(ctx, bson.D{{Key: "_id", Value: ownerID}}).Decode(&doc)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return recorded{}, nil
	case err != nil:
		return recorded{}, fmt.Errorf("read the owner claim of database %q (collection %s): %w", db, ownerColl, err)
	}
	r := recorded{match: bson.D{{Key: "_id", Value: ownerID}, {Key: "claim", Value: bson.D{{Key: "$exists", Value: false}}}}}
	for _, e := range doc {
		if e.Key == "claim" {
			r.text, _ = e.Value.(string)
			r.match[1].Value = e.Value
		}
	}
	return r, nil
}

// checkClaim refuses t when database db is claimed by another owner. It
// reads nothing for a target with no owner (an older host).
func (s *server) checkClaim(ctx context.Context, db string, t *sdk.Target) error {
	if t.Owner == "" {
		return nil
	}
	have, err := s.readClaim(ctx, db)
	if err != nil {
		return err
	}
	return t.CheckClaim(s.what(db), have.text)
}

// claim makes sure database db carries a claim and that it is t's: it
// refuses another owner's, and records t's on a database that has none
// (adopting one an older host made, or making the database, since
// MongoDB creates it on this first write). Two homes racing to claim the
// same database both write the one document; the loser reads the
// winner's claim back and is refused. It does nothing for a target with
// no owner.
func (s *server) claim(ctx context.Context, db string, t *sdk.Target) error {
	mine := t.Claim()
	if mine == "" {
		return nil
	}
	have, err := s.readClaim(ctx, db)
	if err != nil {
		return err
	}
	if err := t.CheckClaim(s.what(db), have.text); err != nil {
		return err
	}
	if _, ok := sdk.ClaimOwner(have.text); ok {
		return nil // t's own
	}
	if err := s.writeClaim(ctx, db, mine, have.match); err != nil {
		return err
	}
	got, err := s.readClaim(ctx, db)
	if err != nil {
		return err
	}
	if err := t.CheckClaim(s.what(db), got.text); err != nil {
		return err
	}
	if _, ok := sdk.ClaimOwner(got.text); !ok {
		return fmt.Errorf("record the owner claim of database %q: collection %s holds no claim after writing one", db, ownerColl)
	}
	return nil
}

// writeClaim records claim in database db. With no claim document there
// (match nil) it inserts one; a duplicate key means another call inserted
// first, which the caller reads back. Otherwise it replaces the document
// match selects, only if it still holds what was read.
func (s *server) writeClaim(ctx context.Context, db, claim string, match bson.D) error {
	coll := s.client.Database(db).Collection(ownerColl)
	var err error
	if match == nil {
		_, err = coll.InsertOne(ctx, claimDoc{ID: ownerID, Claim: claim})
		if mongo.IsDuplicateKeyError(err) {
			err = nil
		}
	} else {
		_, err = coll.ReplaceOne(ctx, match, claimDoc{ID: ownerID, Claim: claim})
	}
	if err != nil {
		return fmt.Errorf("record the owner claim of database %q (collection %s): %w", db, ownerColl, err)
	}
	return nil
}
