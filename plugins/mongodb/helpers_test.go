package mongoadapter

import (
	"context"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/adaptertest"
)

// defaultURL is the FerretDB scripts/testenv starts (MongoDB wire
// protocol over SQLite, not MongoDB).
const defaultURL = "mongodb://127.0.0.1:27017"

// adminURL is the server the tests carve databases from:
// BINKY_TEST_MONGO_URL, else scripts/testenv's FerretDB. A server that
// does not answer fails the test when CI=true and skips it otherwise.
func adminURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("BINKY_TEST_MONGO_URL")
	if u == "" {
		u = defaultURL
	}
	c := client(t, u)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a bound for a hang: a refused server answers at once, a busy one late
	defer cancel()
	if err := c.Ping(ctx, nil); err != nil {
		adaptertest.MissingServer(t, "the MongoDB-protocol server (FerretDB) is not reachable at "+sdk.ScrubAdmin(u, u)+": "+sdk.ScrubAdmin(err.Error(), u)+"; run scripts/testenv up (builds and starts FerretDB on 127.0.0.1:27017) or set BINKY_TEST_MONGO_URL")
	}
	return u
}

// client is a driver client on url, disconnected when the test ends.
func client(t *testing.T, url string) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(url).SetServerSelectionTimeout(3 * time.Second))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c
}

// isFerret reports whether the server is FerretDB.
func isFerret(t *testing.T, c *mongo.Client) bool {
	var info bson.M
	if err := c.Database("admin").RunCommand(t.Context(), bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	_, ok := info["ferretdbVersion"]
	return ok
}

func target(admin, slice string) sdk.Target {
	return sdk.Target{Slice: slice, Project: "bt", AdminURL: admin}
}

func hdr() sdk.Header { return sdk.Header{Protocol: sdk.Protocol, Adapter: Name} }

func mongoIndex(field string) mongo.IndexModel {
	return mongo.IndexModel{Keys: bson.D{{Key: field, Value: 1}}}
}
