package mongoadapter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Name is the adapter's name; binky finds it as binky-adapter-mongodb.
const Name = "mongodb"

// Mongo is the adapter. It is long-lived in the RPC tier: it keeps one
// client per admin URL across calls.
type Mongo struct {
	mu      sync.Mutex
	servers map[string]*server // by admin URL
}

type server struct {
	admin  *admin
	client *mongo.Client
}

// New returns the adapter. It connects to nothing until a call needs it.
func New() *Mongo { return &Mongo{servers: map[string]*server{}} }

// Describe says who the adapter is: mongodb, able to clone where the server
// has $out into another database (MongoDB 4.4+), recording each slice's
// owner (see ownerColl).
func (*Mongo) Describe(context.Context, *sdk.DescribeRequest) (*sdk.DescribeResponse, error) {
	return &sdk.DescribeResponse{Name: Name, Clone: true, Claims: true}, nil
}

func (m *Mongo) server(raw string) (*server, error) {
	a, err := parseAdminURL(raw)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.servers[raw]; ok {
		return s, nil
	}
	opts := options.Client().ApplyURI(raw).
		SetServerSelectionTimeout(5 * time.Second).SetConnectTimeout(5 * time.Second).
		SetMaxPoolSize(4).SetRetryWrites(false)
	c, err := mongo.Connect(opts)
	if err != nil {
		return nil, invalid(raw, "admin_url: %v", err)
	}
	s := &server{admin: a, client: c}
	m.servers[raw] = s
	return s, nil
}

func (m *Mongo) target(t *sdk.Target, source string) (*server, string, error) {
	if err := checkSlice("slice", t.Slice); err != nil {
		return nil, "", err
	}
	if source != "" {
		if err := checkSlice("source", source); err != nil {
			return nil, "", err
		}
	}
	if len(t.Config) > 0 {
		keys := make([]string, 0, len(t.Config))
		for k := range t.Config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, "", sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the mongodb adapter (it takes none)", strings.Join(keys, `", "`))
	}
	s, err := m.server(t.AdminURL)
	if err != nil {
		return nil, "", err
	}
	return s, names.Postgres(t.Slice), nil
}

// Provision checks that the server answers and lets the credentials list
// databases, then claims the slice's database for the request's owner:
// it refuses a database another owner claimed, and records the owner's
// claim on one that has none, which makes the database (MongoDB makes a
// database on its first write). With no owner it records nothing, and the
// database waits for the application's first write.
func (m *Mongo) Provision(ctx context.Context, req *sdk.ProvisionRequest) (*sdk.ProvisionResponse, error) {
	op := fmt.Sprintf("provision mongodb slice %q", req.Slice)
	s, db, err := m.target(&req.Target, "")
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if _, err := s.client.ListDatabaseNames(ctx, bson.D{}); err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("list databases: %w", err))
	}
	if err := s.claim(ctx, db, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return &sdk.ProvisionResponse{}, nil
}

// Resolve answers the admin URL naming the slice's database, and the values
// of resolved, once it has checked that no other owner claimed the
// database. With no owner it connects to nothing.
func (m *Mongo) Resolve(ctx context.Context, req *sdk.ResolveRequest) (*sdk.ResolveResponse, error) {
	op := fmt.Sprintf("resolve mongodb slice %q", req.Slice)
	s, db, err := m.target(&req.Target, "")
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.checkClaim(ctx, db, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return s.admin.resolved(db), nil
}

// Destroy drops the slice's database, claim and all, unless another owner
// claimed it: then it touches nothing. A database that is gone is fine.
func (m *Mongo) Destroy(ctx context.Context, req *sdk.DestroyRequest) (*sdk.DestroyResponse, error) {
	op := fmt.Sprintf("destroy mongodb slice %q", req.Slice)
	s, db, err := m.target(&req.Target, "")
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.checkClaim(ctx, db, &req.Target); err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	if err := s.client.Database(db).Drop(ctx); err != nil {
		return nil, fail(op, req.AdminURL, fmt.Errorf("drop database %q: %w", db, err))
	}
	return &sdk.DestroyResponse{}, nil
}

// Close disconnects every client the adapter opened.
func (m *Mongo) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for k, s := range m.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, s.client.Disconnect(ctx))
		cancel()
		delete(m.servers, k)
	}
	return errors.Join(errs...)
}

var _ sdk.Adapter = (*Mongo)(nil)
