// Command testclient is the mongodb adapter's e2e helper: a service
// process (a migrate, a seed, a service's cmd) writes through a slice with
// it, and the test reads what a world can see. Not installed, not part of
// the adapter. URL is a mongodb:// URL naming the database to use (what
// ${svc.url} resolves to); ADMIN is the server's admin URL.
//
//	testclient put     URL COLL JSON   (inserts one extended-JSON document)
//	testclient index   URL COLL FIELD  (creates an ascending index on FIELD)
//	testclient notes   URL COLL        (the documents' "note" fields, sorted, one a line)
//	testclient indexes URL COLL        (the index names, sorted, one a line)
//	testclient dbs     ADMIN PREFIX    (the databases named PREFIX…, sorted, one a line)
//	testclient drop    ADMIN PREFIX    (drops every database named PREFIX…)
//	testclient server  ADMIN           (prints "ferretdb VERSION" or "mongodb VERSION")
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "testclient:", err)
		os.Exit(1)
	}
}

// arity is how many arguments each command takes after its name.
var arity = map[string]int{"put": 3, "index": 3, "notes": 2, "indexes": 2, "dbs": 2, "drop": 2, "server": 1}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: testclient put|index|notes|indexes|dbs|drop|server URL [ARG...]")
	}
	n, ok := arity[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q", args[0])
	}
	if len(args) != n+1 {
		return fmt.Errorf("%s takes %d arguments; got %d", args[0], n, len(args)-1)
	}
	cs, err := connstring.ParseAndValidate(args[1])
	if err != nil {
		return fmt.Errorf("parse the URL: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(args[1]).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		return err
	}
	defer c.Disconnect(context.Background())
	db := c.Database(cs.Database)
	switch args[0] {
	case "put":
		var doc bson.D
		if err := bson.UnmarshalExtJSON([]byte(args[3]), false, &doc); err != nil {
			return fmt.Errorf("document %q: %w", args[3], err)
		}
		_, err := db.Collection(args[2]).InsertOne(ctx, doc)
		return err
	case "index":
		_, err := db.Collection(args[2]).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: args[3], Value: 1}}})
		return err
	case "notes":
		cur, err := db.Collection(args[2]).Find(ctx, bson.D{})
		if err != nil {
			return err
		}
		var docs []struct{ Note string }
		if err := cur.All(ctx, &docs); err != nil {
			return err
		}
		var notes []string
		for _, d := range docs {
			notes = append(notes, d.Note)
		}
		return printSorted(notes)
	case "indexes":
		specs, err := db.Collection(args[2]).Indexes().ListSpecifications(ctx)
		if err != nil {
			return err
		}
		var names []string
		for _, s := range specs {
			names = append(names, s.Name)
		}
		return printSorted(names)
	case "dbs", "drop":
		all, err := c.ListDatabaseNames(ctx, bson.D{})
		if err != nil {
			return err
		}
		var mine []string
		for _, d := range all {
			if strings.HasPrefix(d, args[2]) {
				mine = append(mine, d)
			}
		}
		if args[0] == "dbs" {
			return printSorted(mine)
		}
		for _, d := range mine {
			if err := c.Database(d).Drop(ctx); err != nil {
				return fmt.Errorf("drop %s: %w", d, err)
			}
		}
		return nil
	case "server":
		var info bson.M
		if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
			return err
		}
		if v, ok := info["ferretdbVersion"]; ok {
			fmt.Println("ferretdb", v)
			return nil
		}
		fmt.Println("mongodb", info["version"])
		return nil
	}
	return nil
}

func printSorted(lines []string) error {
	sort.Strings(lines)
	for _, l := range lines {
		if _, err := fmt.Println(l); err != nil {
			return err
		}
	}
	return nil
}
