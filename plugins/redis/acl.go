package redisadapter

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/binkyhq/binky/sdk"
)

// secretKey holds the random key the passwords derive from, in the admin
// URL's database. It has no '_' before its ':', so it lies outside every
// slice's prefix and no slice user can read it.
const secretKey = "binky:adapter-secret"

// useACL says whether the slice gets an ACL user: config acl when set,
// else whether the server has ACLs (probed once per server).
func (r *Redis) useACL(ctx context.Context, s *slice) (bool, error) {
	if s.acl != nil {
		return *s.acl, nil
	}
	r.mu.Lock()
	known := s.srv.acl
	r.mu.Unlock()
	if known != 0 {
		return known > 0, nil
	}
	err := s.srv.client.ACLWhoAmI(ctx).Err()
	switch {
	case err == nil:
		known = 1
	case unknownCommand(err):
		known = -1
	default:
		return false, fmt.Errorf("ask the server whether it has ACLs: %w", err)
	}
	r.mu.Lock()
	s.srv.acl = known
	r.mu.Unlock()
	return known > 0, nil
}

func unknownCommand(err error) bool {
	var re goredis.Error
	return errors.As(err, &re) && strings.Contains(strings.ToLower(re.Error()), "unknown command")
}

// userRules are the ACL rules of a slice's user: exactly its keys and
// channels, every command but the admin and dangerous ones, and one
// password, given as its SHA-256 so the plain text never reaches the
// server's command stream. Allowed back: INFO (client libraries read the
// server version from it) and CLIENT SETNAME, GETNAME and ID (queue
// libraries name their connections; Redis 7 allows them under +@all
// already, Redis 6 files all of CLIENT under @admin); with clientList also
// CLIENT LIST, which shows every connection to the server (see
// KeyClientList).
func userRules(prefix, password string, channels, clientList bool) []string {
	sum := sha256.Sum256([]byte(password))
	rules := []string{"reset", "on", "#" + hex.EncodeToString(sum[:]), "~" + globEscape(prefix) + "*"}
	if channels {
		rules = append(rules, "&"+globEscape(prefix)+"*")
	}
	rules = append(rules, "+@all", "-@admin", "-@dangerous", "+info", "+client|setname", "+client|getname", "+client|id")
	if clientList {
		rules = append(rules, "+client|list")
	}
	return rules
}

// setUser creates or re-sets the slice's ACL user and returns its
// password. "reset" first makes the result the same whatever the user was.
func setUser(ctx context.Context, s *slice) (string, error) {
	key, err := secret(ctx, s.srv.client)
	if err != nil {
		return "", err
	}
	pw := derivePassword(key, s.user)
	err = s.srv.client.ACLSetUser(ctx, s.user, userRules(s.prefix, pw, true, s.cfg.clientList)...).Err()
	if err != nil && strings.Contains(err.Error(), "&") {
		// Redis 6.0 has no channel rules (every channel is allowed there).
		err = s.srv.client.ACLSetUser(ctx, s.user, userRules(s.prefix, pw, false, s.cfg.clientList)...).Err()
	}
	if err != nil {
		return "", fmt.Errorf("set ACL user %q: %w", s.user, err)
	}
	return pw, nil
}

// derivePassword is the password of a slice's user: hex of
// HMAC-SHA256(key, "password\x00" + user), 64 characters, URL-safe.
func derivePassword(key []byte, user string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("password\x00"))
	h.Write([]byte(user))
	return hex.EncodeToString(h.Sum(nil))
}

// secret returns the key in secretKey, storing a fresh random one first if
// there is none (SET NX, so concurrent adapters agree). It is read on
// every call rather than cached, so all adapter processes follow the
// server's one copy.
func secret(ctx context.Context, c *goredis.Client) ([]byte, error) {
	v, err := c.Get(ctx, secretKey).Result()
	if errors.Is(err, goredis.Nil) {
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return nil, fmt.Errorf("make a secret: %w", err)
		}
		if err := c.SetNX(ctx, secretKey, hex.EncodeToString(fresh), 0).Err(); err != nil {
			return nil, fmt.Errorf("store the secret in %s: %w", secretKey, err)
		}
		v, err = c.Get(ctx, secretKey).Result()
	}
	if err != nil {
		return nil, fmt.Errorf("read the secret in %s: %w", secretKey, err)
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) != 32 {
		return nil, sdk.Errorf(sdk.CodeConflict, "key %s does not hold 64 hex digits; delete it and resolve again", secretKey)
	}
	return key, nil
}
