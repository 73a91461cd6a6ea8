package redisadapter

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
)

// claimKeyPrefix starts the key that records which binky home owns a slice:
// binky:claim:<slice>, holding the text of sdk.Target.Claim. Like
// secretKey it has no '_' before its first ':', so it lies outside every
// slice's prefix: no slice user can read, forge or delete it.
//
// Claims live in logical database 0 whatever the admin URL's database,
// because what they guard is server-wide: the ACL user is, and destroy
// deletes the prefix's keys in every database.
const claimKeyPrefix = "binky:claim:"

// claimTries bounds how often recording a claim starts over when another
// client changed the claim key between reading and writing it.
const claimTries = 10

func claimKey(s *slice) string { return claimKeyPrefix + s.user }

// what names the slice in a refusal: its prefix and server, never the
// admin URL's credentials.
func (s *slice) what() string {
	where := s.srv.url.Host
	if where == "" {
		where = s.srv.url.Path // unix://
	}
	return fmt.Sprintf("redis slice %q (keys %s*) on %s", s.user, s.prefix, where)
}

// readClaim returns the text recorded in the slice's claim key, "" when
// there is none.
func readClaim(ctx context.Context, s *slice) (string, error) {
	v, err := s.srv.claims.Get(ctx, claimKey(s)).Result()
	if errors.Is(err, goredis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the owner claim in %s: %w", claimKey(s), err)
	}
	return v, nil
}

// checkClaim refuses, with code conflict, a call of t on a slice another
// binky home claimed. It reads nothing when t has no owner (an older host).
func checkClaim(ctx context.Context, s *slice, t *sdk.Target) error {
	if t.Owner == "" {
		return nil
	}
	have, err := readClaim(ctx, s)
	if err != nil {
		return err
	}
	return t.CheckClaim(s.what(), have)
}

// claimSlice records t's claim on the slice before provision touches it:
// it refuses a slice another home claimed, adopts one nobody claimed (keys
// or an ACL user left by an older host, or nothing yet) and refreshes its
// own claim's label. The read and the write are one WATCH transaction, so
// of two homes claiming the same slice at once exactly one wins and the
// other is refused.
func claimSlice(ctx context.Context, s *slice, t *sdk.Target) error {
	want := t.Claim()
	if want == "" {
		return nil
	}
	key := claimKey(s)
	for range claimTries {
		err := s.srv.claims.Watch(ctx, func(tx *goredis.Tx) error {
			have, err := tx.Get(ctx, key).Result()
			if err != nil && !errors.Is(err, goredis.Nil) {
				return err
			}
			if err := t.CheckClaim(s.what(), have); err != nil {
				return err
			}
			if have == want {
				return nil
			}
			_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.Set(ctx, key, want, 0)
				return nil
			})
			return err
		}, key)
		if errors.Is(err, goredis.TxFailedErr) {
			continue
		}
		if err != nil && sdk.CodeOf(err) != sdk.CodeConflict {
			return fmt.Errorf("record the owner claim in %s: %w", key, err)
		}
		return err
	}
	return sdk.Errorf(sdk.CodeConflict, "record the owner claim in %s: the key changed under every one of %d tries; retry", key, claimTries)
}

// dropClaim deletes the slice's claim key, the last step of destroy.
func dropClaim(ctx context.Context, s *slice) error {
	if err := s.srv.claims.Del(ctx, claimKey(s)).Err(); err != nil {
		return fmt.Errorf("delete the owner claim in %s: %w", claimKey(s), err)
	}
	return nil
}
