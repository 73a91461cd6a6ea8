package mysqladapter

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
)

// MethodTableCopy is the CloneResponse.Method of every mysql clone: the
// tables re-created and their rows copied on the server.
const MethodTableCopy = "table_copy"

// cloneSQLMode is the session's sql_mode while rows are copied: no strict
// mode (a row the source holds is copied as it is, zero dates included)
// and NO_AUTO_VALUE_ON_ZERO (an AUTO_INCREMENT column holding 0 keeps it).
const cloneSQLMode = "NO_AUTO_VALUE_ON_ZERO"

// Clone makes the slice's database a copy of the source slice's, on the
// server: tables (with their foreign keys and AUTO_INCREMENT counters) and
// rows, then routines, views and triggers. A slice that exists is replaced;
// a failed clone leaves no slice behind. A source holding events or
// packages is refused with code unsupported, so the host builds the slice
// from scratch instead. A source another home claimed (cloning it would
// read its data) or a slice another home claimed (cloning would replace
// it) is refused with code conflict before anything changes; the clone
// records the request's claim, never the source's.
func (m *MySQL) Clone(ctx context.Context, req *sdk.CloneRequest) (*sdk.CloneResponse, error) {
	op := fmt.Sprintf("clone mysql slice %q from %q", req.Slice, req.Source)
	s, err := m.target(&req.Target)
	if err == nil {
		err = checkSlice("source", req.Source)
	}
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	err = m.whileFull(ctx, s.srv, func() error {
		st, err := m.claimStore(ctx, s.srv)
		if err != nil {
			return err
		}
		if err := clone(ctx, st, s, &req.Target, names.MySQL(req.Source)); err != nil {
			return err
		}
		if s.cfg.ownerUser {
			_, err = m.ensureUser(ctx, s.srv, s.db, req.Slice, s.cfg.testDatabases)
		}
		return err
	})
	if err != nil {
		return nil, fail(op, req.AdminURL, err)
	}
	resp := &sdk.CloneResponse{Method: MethodTableCopy}
	// The template's size, for golden list (the tables' data and indexes,
	// as information_schema estimates them); unknown when it will not say.
	var size sql.NullInt64
	if err := s.srv.db.QueryRowContext(ctx, "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", names.MySQL(req.Source)).Scan(&size); err == nil && size.Valid {
		resp.SourceBytes = size.Int64
	}
	return resp, nil
}

func clone(ctx context.Context, st claimStore, s *slice, t *sdk.Target, src string) error {
	if src == s.db {
		return sdk.Errorf(sdk.CodeInvalid, "the source and the slice are the same database %q", src)
	}
	qsrc, err := quoteIdent(src)
	if err != nil {
		return sdk.Errorf(sdk.CodeInvalid, "source database name: %v", err)
	}
	charset, collation, ok, err := schemaOf(ctx, s.srv.db, src)
	if err != nil {
		return fmt.Errorf("look up the source database %s: %w", qsrc, err)
	}
	if !ok {
		return sdk.Errorf(sdk.CodeInvalid, "the source database %s does not exist; provision it first", qsrc)
	}
	if t.Owner != "" {
		_, claim, err := readClaim(ctx, s.srv.db, st, src)
		if err != nil {
			return err
		}
		if err := t.CheckClaim(fmt.Sprintf("the source database %q on %s", src, s.srv.admin.cfg.Addr), claim); err != nil {
			return err
		}
	}
	conn, err := s.srv.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	// Discarding the connection also lets go of the slice's claim lock.
	defer discard(conn)
	if err := lockOn(ctx, conn, s.db); err != nil {
		return err
	}
	if err := checkClaim(ctx, conn, st, s, t); err != nil {
		return err
	}
	c := &cloner{conn: conn, src: src, dst: s.db, qsrc: qsrc, qdst: s.q, skipClaim: st == storeTable}
	if err := c.exec(ctx, "SET SESSION foreign_key_checks = 0, unique_checks = 0, sql_mode = '"+cloneSQLMode+"'"); err != nil {
		return err
	}
	if err := c.exec(ctx, "DROP DATABASE IF EXISTS "+s.q); err != nil {
		return fmt.Errorf("replace the existing slice: %w", err)
	}
	create := "CREATE DATABASE " + s.q
	if isWord(charset) && isWord(collation) {
		create += " CHARACTER SET " + charset + " COLLATE " + collation
	}
	own := t.Claim()
	if st == storeComment && own != "" {
		lit, err := quoteString(own)
		if err != nil {
			return err
		}
		create += " COMMENT " + lit
	}
	if err := c.exec(ctx, create); err != nil {
		return err
	}
	err = c.copy(ctx)
	if err == nil && st == storeTable && own != "" {
		err = recordClaim(ctx, conn, st, s.db, own)
	}
	if err != nil {
		if _, derr := s.srv.db.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+s.q); derr != nil {
			return fmt.Errorf("%w (and removing the half-made copy failed: %v)", err, derr)
		}
		return err
	}
	return nil
}

// cloner copies one database into another over one connection.
type cloner struct {
	conn       *sql.Conn
	src, dst   string
	qsrc, qdst string
	// skipClaim leaves the source's marker table (claimTable) behind: the
	// clone records its own claim.
	skipClaim bool
}

// object is a table, view, routine or trigger to re-create.
type object struct {
	kind    string // table, sequence, view, procedure, function, trigger
	name    string
	ddl     string
	sqlMode string   // for routines and triggers: the mode they were made in
	columns []string // for tables: the columns to copy (not generated)
}

// copy reads every definition while the source is the default database (so
// the server writes same-schema references unqualified), then re-creates
// them with the slice as the default database.
func (c *cloner) copy(ctx context.Context) error {
	if err := c.refuseUnsupported(ctx); err != nil {
		return err
	}
	if err := c.exec(ctx, "USE "+c.qsrc); err != nil {
		return err
	}
	tables, views, err := c.tables(ctx)
	if err != nil {
		return err
	}
	routines, err := c.routines(ctx)
	if err != nil {
		return err
	}
	triggers, err := c.triggers(ctx)
	if err != nil {
		return err
	}
	if err := c.exec(ctx, "USE "+c.qdst); err != nil {
		return err
	}
	for _, t := range tables {
		if err := c.exec(ctx, t.ddl); err != nil {
			return fmt.Errorf("create %s %s: %w", t.kind, t.name, err)
		}
	}
	for _, t := range tables {
		if err := c.copyRows(ctx, t); err != nil {
			return err
		}
	}
	for _, r := range routines {
		if err := c.execIn(ctx, r); err != nil {
			return err
		}
	}
	if err := c.createViews(ctx, views); err != nil {
		return err
	}
	for _, t := range triggers {
		if err := c.execIn(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// refuseUnsupported answers unsupported for what the clone does not copy:
// events, and MariaDB's Oracle-mode packages.
func (c *cloner) refuseUnsupported(ctx context.Context) error {
	var events, packages int
	if err := c.conn.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?", c.src).Scan(&events); err != nil {
		return fmt.Errorf("list the events of %s: %w", c.qsrc, err)
	}
	if err := c.conn.QueryRowContext(ctx,
		"SELECT count(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? AND ROUTINE_TYPE NOT IN ('PROCEDURE', 'FUNCTION')", c.src).Scan(&packages); err != nil {
		return fmt.Errorf("list the routines of %s: %w", c.qsrc, err)
	}
	switch {
	case events > 0:
		return sdk.Errorf(sdk.CodeUnsupported, "the source %s has %d events, which clone does not copy", c.qsrc, events)
	case packages > 0:
		return sdk.Errorf(sdk.CodeUnsupported, "the source %s has %d packages, which clone does not copy", c.qsrc, packages)
	}
	return nil
}

// tables returns the tables and sequences, with their DDL and columns,
// and the views, with theirs.
func (c *cloner) tables(ctx context.Context) (tables, views []object, err error) {
	rows, err := c.conn.QueryContext(ctx,
		"SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", c.src)
	if err != nil {
		return nil, nil, fmt.Errorf("list the tables of %s: %w", c.qsrc, err)
	}
	var all []object
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return nil, nil, err
		}
		if c.skipClaim && name == claimTable {
			continue
		}
		switch typ {
		case "BASE TABLE", "SYSTEM VERSIONED":
			all = append(all, object{kind: "table", name: name})
		case "SEQUENCE":
			all = append(all, object{kind: "sequence", name: name})
		case "VIEW":
			all = append(all, object{kind: "view", name: name})
		default:
			rows.Close()
			return nil, nil, sdk.Errorf(sdk.CodeUnsupported, "table %s of %s is of type %q, which clone does not copy", name, c.qsrc, typ)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, nil, fmt.Errorf("list the tables of %s: %w", c.qsrc, err)
	}
	for _, o := range all {
		q, err := quoteIdent(o.name)
		if err != nil {
			return nil, nil, err
		}
		if o.kind == "view" {
			v, err := c.show(ctx, "SHOW CREATE VIEW "+q, "Create View")
			if err != nil {
				return nil, nil, err
			}
			o.ddl = c.rewrite(v[0])
			views = append(views, o)
			continue
		}
		v, err := c.show(ctx, "SHOW CREATE TABLE "+q, "Create Table")
		if err != nil {
			return nil, nil, err
		}
		o.ddl = v[0]
		if o.kind == "table" {
			if o.columns, err = c.columns(ctx, o.name); err != nil {
				return nil, nil, err
			}
		}
		tables = append(tables, o)
	}
	return tables, views, nil
}

// columns lists a table's stored, non-generated columns in order.
func (c *cloner) columns(ctx context.Context, table string) ([]string, error) {
	rows, err := c.conn.QueryContext(ctx,
		"SELECT COLUMN_NAME, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", c.src, table)
	if err != nil {
		return nil, fmt.Errorf("list the columns of %s: %w", table, err)
	}
	var cols []string
	for rows.Next() {
		var name, extra string
		if err := rows.Scan(&name, &extra); err != nil {
			rows.Close()
			return nil, err
		}
		if !generated(extra) {
			cols = append(cols, name)
		}
	}
	return cols, closeRows(rows)
}

// generated reports whether a column's EXTRA says it is computed (VIRTUAL
// or STORED GENERATED; PERSISTENT on old MariaDB), which INSERT must skip.
func generated(extra string) bool {
	e := strings.ToUpper(extra)
	return strings.Contains(e, "VIRTUAL") || strings.Contains(e, "STORED") || strings.Contains(e, "PERSISTENT")
}

func (c *cloner) routines(ctx context.Context) ([]object, error) {
	rows, err := c.conn.QueryContext(ctx,
		"SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY ROUTINE_TYPE, ROUTINE_NAME", c.src)
	if err != nil {
		return nil, fmt.Errorf("list the routines of %s: %w", c.qsrc, err)
	}
	var out []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.name, &o.kind); err != nil {
			rows.Close()
			return nil, err
		}
		o.kind = strings.ToLower(o.kind)
		out = append(out, o)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for i, o := range out {
		q, err := quoteIdent(o.name)
		if err != nil {
			return nil, err
		}
		col := "Create Procedure"
		if o.kind == "function" {
			col = "Create Function"
		}
		v, err := c.show(ctx, "SHOW CREATE "+strings.ToUpper(o.kind)+" "+q, col, "sql_mode")
		if err != nil {
			return nil, err
		}
		out[i].ddl, out[i].sqlMode = c.rewrite(v[0]), v[1]
	}
	return out, nil
}

func (c *cloner) triggers(ctx context.Context) ([]object, error) {
	rows, err := c.conn.QueryContext(ctx,
		"SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? "+
			"ORDER BY EVENT_OBJECT_TABLE, ACTION_TIMING, EVENT_MANIPULATION, ACTION_ORDER", c.src)
	if err != nil {
		return nil, fmt.Errorf("list the triggers of %s: %w", c.qsrc, err)
	}
	var out []object
	for rows.Next() {
		o := object{kind: "trigger"}
		if err := rows.Scan(&o.name); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, o)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for i, o := range out {
		q, err := quoteIdent(o.name)
		if err != nil {
			return nil, err
		}
		v, err := c.show(ctx, "SHOW CREATE TRIGGER "+q, "SQL Original Statement", "sql_mode")
		if err != nil {
			return nil, err
		}
		out[i].ddl, out[i].sqlMode = c.rewrite(v[0]), v[1]
	}
	return out, nil
}

// copyRows copies a table's rows (a sequence's state) from the source.
func (c *cloner) copyRows(ctx context.Context, t object) error {
	from, err := qualified(c.src, t.name)
	if err != nil {
		return err
	}
	to, err := qualified(c.dst, t.name)
	if err != nil {
		return err
	}
	stmt := "INSERT INTO " + to + " SELECT * FROM " + from
	if t.kind == "table" {
		if len(t.columns) == 0 {
			return nil
		}
		cols, err := quoteList(t.columns)
		if err != nil {
			return err
		}
		stmt = "INSERT INTO " + to + " (" + cols + ") SELECT " + cols + " FROM " + from
	}
	if err := c.exec(ctx, stmt); err != nil {
		return fmt.Errorf("copy the rows of %s %s: %w", t.kind, t.name, err)
	}
	return nil
}

// execIn runs a routine's or trigger's DDL in the sql_mode it was made in.
func (c *cloner) execIn(ctx context.Context, o object) error {
	if _, err := c.conn.ExecContext(ctx, "SET SESSION sql_mode = ?", o.sqlMode); err != nil {
		return fmt.Errorf("set sql_mode for %s %s: %w", o.kind, o.name, err)
	}
	if err := c.exec(ctx, o.ddl); err != nil {
		return fmt.Errorf("create %s %s: %w", o.kind, o.name, err)
	}
	return c.exec(ctx, "SET SESSION sql_mode = '"+cloneSQLMode+"'")
}

// createViews creates views in rounds, so that a view over a view waits
// for the one it reads.
func (c *cloner) createViews(ctx context.Context, views []object) error {
	for len(views) > 0 {
		var later []object
		var last error
		for _, v := range views {
			err := c.exec(ctx, v.ddl)
			switch n := errNumber(err); {
			case err == nil:
			case n == erNoSuchTable || n == erViewInvalid || n == erSPDoesNotExist:
				later, last = append(later, v), fmt.Errorf("create view %s: %w", v.name, err)
			default:
				return fmt.Errorf("create view %s: %w", v.name, err)
			}
		}
		if len(later) == len(views) {
			return last
		}
		views = later
	}
	return nil
}

// rewrite points references the server wrote qualified with the source
// schema at the slice instead.
func (c *cloner) rewrite(ddl string) string {
	return strings.ReplaceAll(ddl, c.qsrc+".", c.qdst+".")
}

// show runs a SHOW CREATE statement and returns the named columns of its
// one row.
func (c *cloner) show(ctx context.Context, stmt string, want ...string) ([]string, error) {
	rows, err := c.conn.QueryContext(ctx, stmt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
		return nil, fmt.Errorf("%s: no row", stmt)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	out := make([]string, len(want))
	for i, w := range want {
		found := false
		for j, col := range cols {
			if strings.EqualFold(col, w) {
				if !vals[j].Valid {
					return nil, sdk.Errorf(sdk.CodeAuth, "%s: the server hides %q from the admin user; grant it SELECT on mysql.proc (MariaDB) or SHOW_ROUTINE", stmt, w)
				}
				out[i], found = vals[j].String, true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: the reply has no column %q", stmt, w)
		}
	}
	return out, nil
}

func (c *cloner) exec(ctx context.Context, stmt string) error {
	if _, err := c.conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", firstLine(stmt), err)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 120 {
		s = s[:120] + " …"
	}
	return s
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}
