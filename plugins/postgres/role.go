package postgresadapter

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/binkyhq/binky/sdk"
)

// roleComment marks the roles binky made: destroy drops a role only when
// it carries this comment, and provision refuses to take over one that does
// not.
const roleComment = "binky slice role"

// secretKeyLen is the size of the random key the passwords derive from.
const secretKeyLen = 32

// roleState reports whether a role exists and whether binky made it.
func roleState(ctx context.Context, q querier, role string) (exists, ours bool, err error) {
	var comment *string
	err = q.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = $1", role).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("look up role %q: %w", role, err)
	}
	return true, comment != nil && *comment == roleComment, nil
}

// ensureRole creates the slice's LOGIN role, or sets the password of the
// one binky made before; createdb (config test_databases) gives it
// CREATEDB, and its absence takes it back. A role of that name that binky
// did not make is a conflict: binky never takes over a role it cannot tell
// is its own.
func (p *Postgres) ensureRole(ctx context.Context, srv *server, role, sliceName string, createdb bool) error {
	verifier, _, err := p.credentials(ctx, srv, sliceName)
	if err != nil {
		return err
	}
	exists, ours, err := roleState(ctx, srv.pool, role)
	if err != nil {
		return err
	}
	switch {
	case exists && !ours:
		return foreignRole(role)
	case exists:
		if err := setPassword(ctx, srv.pool, role, verifier); err != nil {
			return err
		}
		return setCreateDB(ctx, srv.pool, role, createdb)
	}
	pw, err := literal(verifier)
	if err != nil {
		return err
	}
	_, err = srv.pool.Exec(ctx, "CREATE ROLE "+ident(role)+" LOGIN NOSUPERUSER "+createDBOption(createdb)+" NOCREATEROLE NOREPLICATION PASSWORD "+pw)
	if pgCode(err) == codeDuplicateObject {
		// Made at the same moment by another provision; check it is ours.
		return p.ensureRole(ctx, srv, role, sliceName, createdb)
	}
	if err != nil {
		return fmt.Errorf("create role %q: %w", role, err)
	}
	c, _ := literal(roleComment)
	if _, err := srv.pool.Exec(ctx, "COMMENT ON ROLE "+ident(role)+" IS "+c); err != nil {
		return fmt.Errorf("mark role %q as binky's: %w", role, err)
	}
	return nil
}

// checkRole refuses, changing nothing, a role of that name that binky did
// not make.
func checkRole(ctx context.Context, q querier, role string) error {
	exists, ours, err := roleState(ctx, q, role)
	if err != nil {
		return err
	}
	if exists && !ours {
		return foreignRole(role)
	}
	return nil
}

// foreignRole is the refusal of a role binky did not make.
func foreignRole(role string) error {
	return sdk.Errorf(sdk.CodeConflict, "role %q exists and binky did not make it; drop or rename it, or set owner_role = false", role)
}

// resetPassword sets the role's password to its derived value and returns
// it. The role must exist and be binky's.
func (p *Postgres) resetPassword(ctx context.Context, srv *server, role, sliceName string) (string, error) {
	verifier, pw, err := p.credentials(ctx, srv, sliceName)
	if err != nil {
		return "", err
	}
	exists, ours, err := roleState(ctx, srv.pool, role)
	switch {
	case err != nil:
		return "", err
	case !exists:
		return "", sdk.Errorf(sdk.CodeConflict, "role %q does not exist; provision the slice first", role)
	case !ours:
		return "", foreignRole(role)
	}
	return pw, setPassword(ctx, srv.pool, role, verifier)
}

func setPassword(ctx context.Context, q querier, role, verifier string) error {
	pw, err := literal(verifier)
	if err != nil {
		return err
	}
	if _, err := q.Exec(ctx, "ALTER ROLE "+ident(role)+" PASSWORD "+pw); err != nil {
		return fmt.Errorf("set the password of role %q: %w", role, err)
	}
	return nil
}

// createDBOption is the role option that gives (test_databases) or
// withholds CREATEDB.
func createDBOption(createdb bool) string {
	if createdb {
		return "CREATEDB"
	}
	return "NOCREATEDB"
}

// setCreateDB gives role CREATEDB or takes it back, so that turning
// test_databases off takes effect at the next provision.
func setCreateDB(ctx context.Context, q querier, role string, createdb bool) error {
	if _, err := q.Exec(ctx, "ALTER ROLE "+ident(role)+" "+createDBOption(createdb)); err != nil {
		return fmt.Errorf("set %s on role %q: %w", createDBOption(createdb), role, err)
	}
	return nil
}

// dropRole drops the slice's role if binky made it.
func dropRole(ctx context.Context, q querier, role string) error {
	exists, ours, err := roleState(ctx, q, role)
	if err != nil || !exists || !ours {
		return err
	}
	if _, err := q.Exec(ctx, "DROP ROLE IF EXISTS "+ident(role)); err != nil {
		return fmt.Errorf("drop role %q: %w", role, err)
	}
	return nil
}

// credentials derives a slice's password and its SCRAM-SHA-256 verifier
// from the server's secret.
func (p *Postgres) credentials(ctx context.Context, srv *server, sliceName string) (verifier, password string, err error) {
	key, err := p.secret(ctx, srv)
	if err != nil {
		return "", "", err
	}
	password = derivePassword(key, sliceName)
	salt := mac(key, "salt", sliceName)[:scramSaltLen]
	verifier, err = scramVerifier(password, salt, scramIterations)
	return verifier, password, err
}

// derivePassword is the password of a slice: hex of HMAC-SHA256(key,
// "password\x00" + slice). 64 characters, URL-safe.
func derivePassword(key []byte, sliceName string) string {
	return hex.EncodeToString(mac(key, "password", sliceName))
}

func mac(key []byte, purpose, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// secret returns the key the passwords derive from: 32 random bytes in the
// one row of binky.adapter_secret in the admin database, made on first use
// under an advisory lock, so concurrent adapters agree. It is read on every
// call rather than cached, so every adapter process follows the server's
// one copy even after someone drops it.
func (p *Postgres) secret(ctx context.Context, srv *server) ([]byte, error) {
	var key []byte
	err := srv.pool.QueryRow(ctx, "SELECT key FROM binky.adapter_secret WHERE id = 1").Scan(&key)
	switch c := pgCode(err); {
	case err == nil:
	case errors.Is(err, pgx.ErrNoRows), c == codeUndefinedTable, c == codeInvalidSchema:
		if key, err = makeSecret(ctx, srv); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("read binky.adapter_secret: %w", err)
	}
	if len(key) != secretKeyLen {
		return nil, sdk.Errorf(sdk.CodeConflict, "binky.adapter_secret holds a key of %d bytes, not %d; delete its row and resolve again", len(key), secretKeyLen)
	}
	return key, nil
}

// secretLock is the advisory lock taken while the secret is made.
const secretLock = 0x62696e6b79 // "binky"

func makeSecret(ctx context.Context, srv *server) ([]byte, error) {
	fresh := make([]byte, secretKeyLen)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("make a secret: %w", err)
	}
	var key []byte
	err := pgx.BeginFunc(ctx, srv.pool, func(tx pgx.Tx) error {
		var template bool
		if err := tx.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = current_database()").Scan(&template); err != nil {
			return fmt.Errorf("inspect the admin database: %w", err)
		}
		if template {
			return sdk.Errorf(sdk.CodeInvalid, "admin_url names a template database; owner_role keeps a secret in the admin database, so point admin_url at another (postgres)")
		}
		for _, stmt := range []string{
			"SELECT pg_advisory_xact_lock(" + fmt.Sprint(secretLock) + ")",
			"CREATE SCHEMA IF NOT EXISTS binky",
			"REVOKE ALL ON SCHEMA binky FROM PUBLIC",
			"CREATE TABLE IF NOT EXISTS binky.adapter_secret (id int PRIMARY KEY CHECK (id = 1), key bytea NOT NULL)",
			"REVOKE ALL ON binky.adapter_secret FROM PUBLIC",
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("make binky.adapter_secret: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, "INSERT INTO binky.adapter_secret (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", fresh); err != nil {
			return fmt.Errorf("store the secret: %w", err)
		}
		return tx.QueryRow(ctx, "SELECT key FROM binky.adapter_secret WHERE id = 1").Scan(&key)
	})
	if err != nil {
		return nil, err
	}
	return key, nil
}
