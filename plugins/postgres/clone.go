package postgresadapter

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// Clone methods reported in CloneResponse.Method.
const (
	// MethodCloneRequested: STRATEGY = FILE_COPY with file_copy_method =
	// clone (PostgreSQL 18+), not verified: the server copies the bytes
	// silently where the filesystem cannot share them, and the adapter
	// could not read the server's data directory to see which it did.
	MethodCloneRequested = "file_copy, clone requested"
	// MethodCopyOnWrite: as MethodCloneRequested, and the clone's files
	// were seen (FIEMAP) to share their blocks with the template's.
	MethodCopyOnWrite = "file_copy, copy-on-write"
	// MethodCopied: as MethodCloneRequested, and the clone's files were
	// seen to have blocks of their own: the filesystem (ext4, say) cannot
	// reflink and the server copied every byte.
	MethodCopied = "file_copy, copied"
	// MethodFileCopy: the database's files were copied (STRATEGY =
	// FILE_COPY without clone, or any server before 15).
	MethodFileCopy = "file_copy"
	// MethodWALLog: the copy was written through the WAL (the default
	// STRATEGY of 15 to 17).
	MethodWALLog = "wal_log"
)

// Clone makes the slice's database a copy of the source slice's: CREATE
// DATABASE … TEMPLATE source, after freezing the source (cow.go) and
// terminating every connection to it. A slice that exists is replaced. The source must not be claimed
// by another home (that would read its data), nor the slice (that would
// replace it): either is refused with code conflict before anything
// changes. The clone carries the request's claim, never the source's
// (TEMPLATE copies no comment; the clone's is recorded before the slice's
// lock is let go). With owner_role the clone is owned by its own role,
// fenced like a provisioned slice, and the objects the source's role owned
// inside it now belong to the clone's role.
func (p *Postgres) Clone(ctx context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	op := fmt.Sprintf("clone postgres slice %q from %q", req.Slice, req.Source)
	s, err := p.target(&req.Target)
	if err == nil {
		err = checkSlice("source", req.Source)
	}
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	src := names.Postgres(req.Source)
	var method string
	err = p.whileFull(ctx, s.srv, func() (err error) {
		method, err = p.clone(ctx, s, &req.Target, src)
		return err
	})
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	resp := &sdk.CloneResponse{Method: method}
	// The template's size, for golden list; a server that will not say
	// costs only that column.
	_ = s.srv.pool.QueryRow(ctx, "SELECT pg_database_size($1)", src).Scan(&resp.SourceBytes)
	return resp, nil
}

func (p *Postgres) clone(ctx context.Context, s *slice, t *sdk.Target, src string) (string, error) {
	if src == s.db {
		return "", sdk.Errorf(sdk.CodeInvalid, "the source and the slice are the same database %q", src)
	}
	pool := s.srv.pool
	ok, comment, err := dbClaim(ctx, pool, src)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", sdk.Errorf(sdk.CodeInvalid, "the source database %q does not exist; provision it first", src)
	}
	if err := t.CheckClaim(fmt.Sprintf("the source database %q on %s", src, s.srv.where()), comment); err != nil {
		return "", err
	}
	v, err := p.serverVersion(ctx, s.srv)
	if err != nil {
		return "", err
	}
	strategy, method, err := pickStrategy(s.cfg.strategy, v)
	if err != nil {
		return "", err
	}
	if err := freeze(ctx, pool, src); err != nil {
		// The clone is as good; only its first reads write more.
		fmt.Fprintf(os.Stderr, "binky-adapter-postgres: %v; the worlds cloned from it rewrite its pages on first read\n", err)
	}
	if s.cfg.ownerRole {
		// Settle the secret the role's password derives from before the
		// slice is replaced, so that ensureRole below seldom fails.
		if _, _, err := p.credentials(ctx, s.srv, t.Slice); err != nil {
			return "", err
		}
	}
	conn, err := lockSlice(ctx, pool, s.db)
	if err != nil {
		return "", err
	}
	method, err = copyLocked(ctx, conn, s, t, src, v, strategy, method)
	unlockSlice(ctx, conn, s.db)
	if err != nil {
		return "", err
	}
	if s.cfg.ownerRole {
		err = p.ensureRole(ctx, s.srv, s.db, t.Slice, s.cfg.testDatabases)
		if err == nil {
			err = p.handOver(ctx, s, src, s.db)
		}
		if err != nil {
			_ = dropDatabase(context.WithoutCancel(ctx), pool, v, s.db)
			return "", err
		}
	}
	return method, nil
}

// copyLocked, holding the slice's lock on conn, refuses a slice another
// home claimed (and, with owner_role, a role of its name binky did not
// make), replaces the slice by a copy of src, and records t's claim on the
// copy. It returns the method that made the copy.
func copyLocked(ctx context.Context, conn *pgxpool.Conn, s *slice, t *sdk.Target, src string, version int, strategy, method string) (string, error) {
	if err := checkClaim(ctx, conn, s, t); err != nil {
		return "", err
	}
	if s.cfg.ownerRole {
		if err := checkRole(ctx, conn, s.db); err != nil {
			return "", err
		}
	}
	if err := dropDatabase(ctx, conn, version, s.db); err != nil {
		return "", fmt.Errorf("replace the existing slice: %w", err)
	}
	stmt := "CREATE DATABASE " + ident(s.db) + " TEMPLATE " + ident(src)
	if strategy != "" {
		stmt += " STRATEGY = " + strategy
	}
	if method == MethodCloneRequested {
		if _, err := conn.Exec(ctx, "SET file_copy_method = clone"); err != nil {
			method = MethodFileCopy // the platform cannot clone files: copy them
		}
		defer resetSession(ctx, conn)
	}
	err := retryInUse(ctx, func() error {
		if err := terminate(ctx, conn, src); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, stmt)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create database %q from template %q: %w", s.db, src, err)
	}
	if claim := t.Claim(); claim != "" {
		if err := recordClaim(ctx, conn, s.db, claim); err != nil {
			if derr := dropDatabase(context.WithoutCancel(ctx), conn, version, s.db); derr != nil {
				return "", fmt.Errorf("%w (and dropping the unclaimed clone failed: %v)", err, derr)
			}
			return "", err
		}
	}
	if method == MethodCloneRequested {
		switch sh, _ := verifyClone(ctx, conn, s.db); sh {
		case sharingShared:
			method = MethodCopyOnWrite
		case sharingCopied:
			method = MethodCopied
		}
	}
	return method, nil
}

// pickStrategy chooses CREATE DATABASE's STRATEGY clause (empty: none) for
// a config's clone_strategy on a server version, and the method it means.
func pickStrategy(want string, version int) (clause, method string, err error) {
	switch {
	case version >= 180000 && want != StrategyWALLog:
		return "FILE_COPY", MethodCloneRequested, nil
	case version < 150000 && want == StrategyWALLog:
		return "", "", sdk.Errorf(sdk.CodeInvalid, "config clone_strategy %q needs PostgreSQL 15 or later; this server is %d", StrategyWALLog, version)
	case version < 150000:
		return "", MethodFileCopy, nil
	case want == StrategyFileCopy:
		return "FILE_COPY", MethodFileCopy, nil
	case want == StrategyWALLog:
		return "WAL_LOG", MethodWALLog, nil
	}
	return "", MethodWALLog, nil
}

// resetSession puts a pooled connection back the way the pool gave it, or
// closes it so that the pool does not hand it out again.
func resetSession(ctx context.Context, conn *pgxpool.Conn) {
	ctx = context.WithoutCancel(ctx)
	if _, err := conn.Exec(ctx, "RESET ALL"); err != nil {
		_ = conn.Conn().Close(ctx)
	}
}

// handOver fences the clone for its role and gives that role what the
// source's role owned inside it. REASSIGN OWNED also hands over the
// databases the source's role owns — the source itself — so the source's
// ownership is put back in the same transaction.
func (p *Postgres) handOver(ctx context.Context, s *slice, src, owner string) error {
	if err := fence(ctx, s.srv.pool, s.db, owner); err != nil {
		return err
	}
	exists, ours, err := roleState(ctx, s.srv.pool, src)
	if err != nil || !exists || !ours {
		return err
	}
	var srcOwner string
	if err := s.srv.pool.QueryRow(ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", src).Scan(&srcOwner); err != nil {
		return fmt.Errorf("look up the owner of database %q: %w", src, err)
	}
	cfg := s.srv.pool.Config().ConnConfig.Copy()
	cfg.Database = s.db
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to the clone %q: %w", s.db, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "REASSIGN OWNED BY "+ident(src)+" TO "+ident(owner)); err != nil {
			return fmt.Errorf("hand the objects of role %q in %q to role %q: %w", src, s.db, owner, err)
		}
		if _, err := tx.Exec(ctx, "ALTER DATABASE "+ident(src)+" OWNER TO "+ident(srcOwner)); err != nil {
			return fmt.Errorf("give database %q back to role %q: %w", src, srcOwner, err)
		}
		return nil
	})
}
