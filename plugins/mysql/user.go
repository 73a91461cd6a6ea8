package mysqladapter

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Slice users (config owner_user = true). Each slice gets a user of its
// own, granted ALL on its database alone (and, with test_databases, on the
// names of its test databases, testdb.go), and resolve answers with that
// user's credentials: one world cannot open another's database.
//
// The user is binky_<16 hex of SHA-256 of the database name>@'%': 22
// characters (MySQL allows 32), the same for a slice every time, and
// marked binky's by its name (MariaDB keeps no comment on a user). Its
// password is derived, not stored: hex of HMAC-SHA256 of the slice name
// under a random 32-byte key kept in binky.adapter_secret, a table only
// the admin can read, made on first use.

// secretKeyLen is the size of the random key the passwords derive from.
const secretKeyLen = 32

// erNonexistingGrant is the error of a REVOKE of what was not granted.
const erNonexistingGrant = 1141

// userName is the slice user of database db.
func userName(db string) string {
	sum := sha256.Sum256([]byte(db))
	return "binky_" + hex.EncodeToString(sum[:8])
}

// account is the user's 'name'@'%' for the user statements.
func account(user string) string { return "'" + user + "'@'%'" }

// grantPattern is db as a database name in GRANT, where '_' and '%' are
// wildcards: escaped, so it names db alone; suffix (a pattern) is added
// as it is.
func grantPattern(db, suffix string) (string, error) {
	esc := strings.NewReplacer(`\`, `\\`, "_", `\_`, "%", `\%`).Replace(db)
	return quoteIdent(esc + suffix)
}

// ensureUser makes the slice user of database db exist with the password
// of slice, granted ALL on db and, with tests, on db's test-database names
// (revoked without). It returns the password.
func (m *MySQL) ensureUser(ctx context.Context, srv *server, db, slice string, tests bool) (string, error) {
	key, err := m.secret(ctx, srv)
	if err != nil {
		return "", err
	}
	pw := derivePassword(key, slice)
	lit, err := quoteString(pw)
	if err != nil {
		return "", err
	}
	acc := account(userName(db))
	for _, stmt := range []string{
		"CREATE USER IF NOT EXISTS " + acc + " IDENTIFIED BY " + lit,
		"ALTER USER " + acc + " IDENTIFIED BY " + lit,
	} {
		if _, err := srv.db.ExecContext(ctx, stmt); err != nil {
			return "", fmt.Errorf("make the slice user of database %q: %w", db, err)
		}
	}
	own, err := grantPattern(db, "")
	if err != nil {
		return "", err
	}
	if _, err := srv.db.ExecContext(ctx, "GRANT ALL PRIVILEGES ON "+own+".* TO "+acc); err != nil {
		return "", fmt.Errorf("grant the slice user database %q: %w", db, err)
	}
	for _, p := range testPatterns(db) {
		var stmt string
		if tests {
			stmt = "GRANT ALL PRIVILEGES ON " + p + ".* TO " + acc
		} else {
			stmt = "REVOKE ALL PRIVILEGES ON " + p + ".* FROM " + acc
		}
		_, err := srv.db.ExecContext(ctx, stmt)
		if err != nil && !(errNumber(err) == erNonexistingGrant && !tests) {
			return "", fmt.Errorf("grant the slice user of %q its test databases: %w", db, err)
		}
	}
	return pw, nil
}

// dropUser drops the slice user of database db, if there is one.
func dropUser(ctx context.Context, q queryer, db string) error {
	if _, err := q.ExecContext(ctx, "DROP USER IF EXISTS "+account(userName(db))); err != nil {
		return fmt.Errorf("drop the slice user of database %q: %w", db, err)
	}
	return nil
}

// derivePassword is the password of a slice: hex of HMAC-SHA256(key,
// "password\x00" + slice). 64 characters, URL-safe.
func derivePassword(key []byte, slice string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("password\x00"))
	h.Write([]byte(slice))
	return hex.EncodeToString(h.Sum(nil))
}

// secret returns the key the passwords derive from: the one row of
// binky.adapter_secret, made on first use (INSERT IGNORE, so concurrent
// adapters agree on the first one written).
func (m *MySQL) secret(ctx context.Context, srv *server) ([]byte, error) {
	var key []byte
	err := srv.db.QueryRowContext(ctx, "SELECT k FROM binky.adapter_secret WHERE id = 1").Scan(&key)
	switch n := errNumber(err); {
	case err == nil:
	case errors.Is(err, sql.ErrNoRows), n == erNoSuchTable, n == erBadDB:
		if key, err = makeSecret(ctx, srv.db); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("read binky.adapter_secret: %w", err)
	}
	if len(key) != secretKeyLen {
		return nil, fmt.Errorf("binky.adapter_secret holds a key of %d bytes, not %d; delete its row and resolve again", len(key), secretKeyLen)
	}
	return key, nil
}

func makeSecret(ctx context.Context, q queryer) ([]byte, error) {
	fresh := make([]byte, secretKeyLen)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("make a secret: %w", err)
	}
	for _, stmt := range []string{
		"CREATE DATABASE IF NOT EXISTS binky",
		"CREATE TABLE IF NOT EXISTS binky.adapter_secret (id TINYINT UNSIGNED NOT NULL PRIMARY KEY, k VARBINARY(32) NOT NULL)",
	} {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("make binky.adapter_secret: %w", err)
		}
	}
	if _, err := q.ExecContext(ctx, "INSERT IGNORE INTO binky.adapter_secret (id, k) VALUES (1, ?)", fresh); err != nil {
		return nil, fmt.Errorf("store the secret: %w", err)
	}
	var key []byte
	if err := q.QueryRowContext(ctx, "SELECT k FROM binky.adapter_secret WHERE id = 1").Scan(&key); err != nil {
		return nil, fmt.Errorf("read binky.adapter_secret: %w", err)
	}
	return key, nil
}

// as is the admin connection with the credentials replaced: what the
// slice user's address and DSN are built from.
func (a *admin) as(user, password string) *admin {
	c := a.cfg.Clone()
	c.User, c.Passwd = user, password
	b := &admin{cfg: c}
	if a.url != nil {
		u := *a.url
		u.User = url.UserPassword(user, password)
		b.url = &u
	}
	return b
}
