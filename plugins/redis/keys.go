package redisadapter

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
)

// scanBatch is the COUNT hint of each SCAN, and so about the size of each
// UNLINK.
const scanBatch = 1000

// deleteKeys deletes every key under prefix in every logical database the
// server has (only the admin URL's when the admin may not read CONFIG), and
// returns how many it deleted.
func deleteKeys(ctx context.Context, srv *server, prefix string) (int64, error) {
	dbs := []int{srv.db}
	if n, err := databases(ctx, srv.client); err == nil {
		dbs = dbs[:0]
		for i := range n {
			dbs = append(dbs, i)
		}
	}
	var total int64
	for _, db := range dbs {
		c := srv.client
		if db != srv.db {
			opts := *srv.client.Options()
			opts.DB = db
			opts.PoolSize = 1
			c = goredis.NewClient(&opts)
		}
		n, err := deleteIn(ctx, c, prefix)
		if c != srv.client {
			_ = c.Close()
		}
		total += n
		if err != nil {
			return total, fmt.Errorf("delete the keys %s* in database %d: %w", prefix, db, err)
		}
	}
	return total, nil
}

// databases is the server's number of logical databases.
func databases(ctx context.Context, c *goredis.Client) (int, error) {
	m, err := c.ConfigGet(ctx, "databases").Result()
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(m["databases"])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("CONFIG GET databases answered %q", m["databases"])
	}
	return n, nil
}

// deleteIn deletes the keys under prefix in c's database, page by page.
func deleteIn(ctx context.Context, c *goredis.Client, prefix string) (int64, error) {
	size, err := c.DBSize(ctx).Result()
	if err != nil || size == 0 {
		return 0, err
	}
	match := globEscape(prefix) + "*"
	var total int64
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, match, scanBatch).Result()
		if err != nil {
			return total, err
		}
		if len(keys) > 0 {
			n, err := c.Unlink(ctx, keys...).Result()
			if unknownCommand(err) { // Redis before 4.0
				n, err = c.Del(ctx, keys...).Result()
			}
			if err != nil {
				return total, err
			}
			total += n
		}
		if cursor = next; cursor == 0 {
			return total, nil
		}
	}
}

// copyPrefix deletes the keys under to (in every database), then copies
// every key under from in the admin URL's database to the same name under
// to, page by page, with COPY (Redis 6.2+; older servers answer
// unsupported). Values are copied as they are: one that names a key by
// its full name still names the source's.
func copyPrefix(ctx context.Context, srv *server, from, to string) error {
	if _, err := deleteKeys(ctx, srv, to); err != nil {
		return err
	}
	match := globEscape(from) + "*"
	var cursor uint64
	for {
		keys, next, err := srv.client.Scan(ctx, cursor, match, scanBatch).Result()
		if err != nil {
			return fmt.Errorf("list the keys %s: %w", match, err)
		}
		if len(keys) > 0 {
			cmds, err := srv.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
				for _, k := range keys {
					p.Copy(ctx, k, to+strings.TrimPrefix(k, from), srv.db, true)
				}
				return nil
			})
			if err != nil {
				for _, cmd := range cmds {
					if unknownCommand(cmd.Err()) {
						return sdk.Errorf(sdk.CodeUnsupported, "the server has no COPY (Redis 6.2+): build the slice with provision, migrate and seed")
					}
				}
				return fmt.Errorf("copy the keys %s to %s*: %w", match, to, err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// globEscape escapes the glob metacharacters of Redis patterns (used by
// SCAN MATCH and by ACL key and channel patterns), so a prefix matches
// only itself.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
