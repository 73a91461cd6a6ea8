package redisadapter

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
)

// sizeKeyLimit bounds how many keys one size call weighs: a slice with
// more is told by the first sizeKeyLimit, and says so.
const sizeKeyLimit = 100_000

// Size is the memory of the slice's keys: the sum of MEMORY USAGE over the
// keys under its prefix in the admin URL's database (prefix mode) or over
// every key of its database (db mode), found with SCAN. MEMORY USAGE
// samples the members of large values, so the answer is approximate; a
// slice of more than sizeKeyLimit keys is weighed by its first ones and
// says so. A slice with no key is 0 bytes. Size reads only: it neither
// checks nor records the slice's claim.
func (r *Redis) Size(ctx context.Context, req *sdk.SizeRequest) (*sdk.SizeResponse, error) {
	op := fmt.Sprintf("size of redis slice %q", req.Slice)
	s, err := r.target(&req.Target)
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	match := globEscape(s.prefix) + "*"
	idx := s.srv.db
	if s.cfg.mode == modeDB {
		i, ok, err := assignedDB(ctx, s)
		if err != nil {
			return nil, fail(op, req.AdminURL, err)
		}
		if !ok {
			return &sdk.SizeResponse{Approximate: true}, nil
		}
		idx, match = i, "*"
	}
	resp, err := withDB(ctx, s.srv, idx, func(c *goredis.Client) (*sdk.SizeResponse, error) {
		return keysMemory(ctx, c, match, sizeKeyLimit)
	})
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	return resp, nil
}

// keysMemory sums MEMORY USAGE over the keys matching match in c's
// database, SCAN page by page, stopping after limit keys.
func keysMemory(ctx context.Context, c *goredis.Client, match string, limit int) (*sdk.SizeResponse, error) {
	resp := &sdk.SizeResponse{Approximate: true, Note: "MEMORY USAGE of the slice's keys (sampled)"}
	var cursor uint64
	seen := 0
	for {
		keys, next, err := c.Scan(ctx, cursor, match, scanBatch).Result()
		if err != nil {
			return nil, err
		}
		cut := len(keys) > limit-seen
		if cut {
			keys = keys[:limit-seen]
		}
		if len(keys) > 0 {
			pipe := c.Pipeline()
			cmds := make([]*goredis.IntCmd, len(keys))
			for i, k := range keys {
				cmds[i] = pipe.MemoryUsage(ctx, k)
			}
			if _, err := pipe.Exec(ctx); err != nil && err != goredis.Nil {
				return nil, fmt.Errorf("MEMORY USAGE: %w", err)
			}
			for _, cmd := range cmds {
				resp.Bytes += cmd.Val() // 0 for a key gone since the scan
			}
			seen += len(keys)
		}
		if cursor = next; cursor == 0 && !cut {
			return resp, nil
		}
		if seen >= limit {
			resp.Note = fmt.Sprintf("MEMORY USAGE of the slice's first %d keys (sampled); it has more", limit)
			return resp, nil
		}
	}
}

var _ sdk.Sizer = (*Redis)(nil)
