package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
)

// In db mode (config mode = "db") a slice is a logical database of its
// own rather than a key prefix, for an application that cannot prefix its
// keys. Which database belongs to which slice is recorded in the hash
// dbsKey in logical database 0, beside the owner claims: field the index,
// value the slice name. Database 0 and the admin URL's database are never
// handed out, so the record and the claims never share a database with a
// slice's keys. There is no credential fence: Redis ACLs cannot keep a
// user to one database, so the slice is reached with the admin
// credentials.
const dbsKey = "binky:dbs"

// dbTries bounds how often assigning a database starts over when another
// client changed dbsKey between reading and writing it.
const dbTries = 10

// assignedDB returns the database recorded for the slice, ok false when
// there is none.
func assignedDB(ctx context.Context, s *slice) (int, bool, error) {
	m, err := s.srv.claims.HGetAll(ctx, dbsKey).Result()
	if err != nil {
		return 0, false, fmt.Errorf("read the database assignments in %s: %w", dbsKey, err)
	}
	i, ok := dbOf(m, s.user)
	return i, ok, nil
}

func dbOf(m map[string]string, slice string) (int, bool) {
	for k, v := range m {
		if v != slice {
			continue
		}
		if i, err := strconv.Atoi(k); err == nil {
			return i, true
		}
	}
	return 0, false
}

// assignDB returns the slice's database, recording the lowest free one
// first when it has none (existed false). A database is free when no
// slice has it, it is neither 0 nor the admin URL's, and it holds no key
// (something outside binky may use it). The read and the write are one
// WATCH transaction, so two slices never get one database.
func assignDB(ctx context.Context, s *slice) (idx int, existed bool, err error) {
	n, err := databases(ctx, s.srv.client)
	if err != nil {
		return 0, false, fmt.Errorf("read the number of logical databases (CONFIG GET databases; db mode needs it): %w", err)
	}
	for range dbTries {
		err = s.srv.claims.Watch(ctx, func(tx *goredis.Tx) error {
			m, err := tx.HGetAll(ctx, dbsKey).Result()
			if err != nil {
				return err
			}
			if i, ok := dbOf(m, s.user); ok {
				idx, existed = i, true
				return nil
			}
			idx = -1
			for i := 1; i < n && idx < 0; i++ {
				if _, taken := m[strconv.Itoa(i)]; taken || i == s.srv.db {
					continue
				}
				size, err := withDB(ctx, s.srv, i, func(c *goredis.Client) (int64, error) { return c.DBSize(ctx).Result() })
				if err != nil {
					return err
				}
				if size == 0 {
					idx = i
				}
			}
			if idx < 0 {
				return sdk.Errorf(sdk.CodeConflict, "no free logical database for %s: the server has %d (databases in redis.conf), and each is 0, the admin URL's, another slice's or holds keys; destroy a world or raise databases", s.what(), n)
			}
			_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.HSet(ctx, dbsKey, strconv.Itoa(idx), s.user)
				return nil
			})
			return err
		}, dbsKey)
		if errors.Is(err, goredis.TxFailedErr) {
			continue
		}
		if err != nil && sdk.CodeOf(err) != sdk.CodeConflict {
			return 0, false, fmt.Errorf("assign a logical database in %s: %w", dbsKey, err)
		}
		return idx, existed, err
	}
	return 0, false, sdk.Errorf(sdk.CodeConflict, "assign a logical database in %s: the key changed under every one of %d tries; retry", dbsKey, dbTries)
}

// releaseDB flushes the slice's database and forgets the assignment; a
// slice with none is fine.
func releaseDB(ctx context.Context, s *slice) error {
	idx, ok, err := assignedDB(ctx, s)
	if err != nil || !ok {
		return err
	}
	if _, err := withDB(ctx, s.srv, idx, func(c *goredis.Client) (string, error) { return c.FlushDB(ctx).Result() }); err != nil {
		return fmt.Errorf("flush logical database %d: %w", idx, err)
	}
	if err := s.srv.claims.HDel(ctx, dbsKey, strconv.Itoa(idx)).Err(); err != nil {
		return fmt.Errorf("forget the assignment of database %d in %s: %w", idx, dbsKey, err)
	}
	return nil
}

// copyDB makes database to a copy of database from: it flushes to, then
// copies every key with COPY … DB (Redis 6.2+; older servers answer
// unsupported), page by page.
func copyDB(ctx context.Context, srv *server, from, to int) error {
	if _, err := withDB(ctx, srv, to, func(c *goredis.Client) (string, error) { return c.FlushDB(ctx).Result() }); err != nil {
		return fmt.Errorf("flush logical database %d: %w", to, err)
	}
	_, err := withDB(ctx, srv, from, func(c *goredis.Client) (int, error) {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, "", scanBatch).Result()
			if err != nil {
				return 0, err
			}
			if len(keys) > 0 {
				cmds, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
					for _, k := range keys {
						p.Copy(ctx, k, k, to, true)
					}
					return nil
				})
				if err != nil {
					for _, cmd := range cmds {
						if unknownCommand(cmd.Err()) {
							return 0, sdk.Errorf(sdk.CodeUnsupported, "the server has no COPY (Redis 6.2+): build the slice with provision, migrate and seed")
						}
					}
					return 0, err
				}
			}
			if cursor = next; cursor == 0 {
				return 0, nil
			}
		}
	})
	if err != nil && sdk.CodeOf(err) != sdk.CodeUnsupported {
		return fmt.Errorf("copy logical database %d to %d: %w", from, to, err)
	}
	return err
}

// withDB runs f on a client of database idx: the admin client when idx is
// the admin URL's database, else a one-connection client closed after.
func withDB[T any](ctx context.Context, srv *server, idx int, f func(*goredis.Client) (T, error)) (T, error) {
	if idx == srv.db {
		return f(srv.client)
	}
	opts := *srv.client.Options()
	opts.DB = idx
	opts.PoolSize = 1
	c := goredis.NewClient(&opts)
	defer c.Close()
	return f(c)
}

// dbURL is the admin URL naming database idx: the path of a redis://
// URL, the db parameter of a unix:// one.
func dbURL(admin *url.URL, idx int) string {
	u := *admin
	if u.Scheme == "unix" {
		q := u.Query()
		q.Set("db", strconv.Itoa(idx))
		u.RawQuery = q.Encode()
	} else {
		u.Path = "/" + strconv.Itoa(idx)
		u.RawPath = ""
	}
	return u.String()
}
