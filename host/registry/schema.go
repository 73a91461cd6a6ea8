package registry

import "zombiezen.com/go/sqlite/sqlitemigration"

// AppID marks binky.db as Binky's ("BKYD"); a SQLite file with another
// application id is refused.
const AppID int32 = 0x424b5944

// SchemaVersion is the schema version this binary writes: the number of
// migrations. A test keeps it equal to len(migrations()).
const SchemaVersion int32 = 10

// migrations are applied in order; user_version counts those applied. Only
// ever append (and raise SchemaVersion).
func migrations() []string {
	return []string{
		// 1: the first schema.
		`
CREATE TABLE worktrees (
	id          INTEGER PRIMARY KEY,
	project     TEXT NOT NULL,
	name        TEXT NOT NULL,
	branch      TEXT NOT NULL DEFAULT '',
	path        TEXT NOT NULL DEFAULT '',
	repo        TEXT NOT NULL DEFAULT '',
	config_path TEXT NOT NULL DEFAULT '',
	state       TEXT NOT NULL DEFAULT 'down',
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	UNIQUE (project, name)
);
CREATE INDEX worktrees_branch ON worktrees (branch);

CREATE TABLE services (
	worktree_id    INTEGER NOT NULL REFERENCES worktrees (id) ON DELETE CASCADE,
	name           TEXT NOT NULL,
	kind           TEXT NOT NULL CHECK (kind IN ('cmd', 'adapter')),
	state          TEXT NOT NULL DEFAULT '',
	pid            INTEGER NOT NULL DEFAULT 0,
	pgid           INTEGER NOT NULL DEFAULT 0,
	start_time     INTEGER NOT NULL DEFAULT 0,
	ports          TEXT NOT NULL DEFAULT '{}',
	url            TEXT NOT NULL DEFAULT '',
	address        TEXT NOT NULL DEFAULT '',
	vals           TEXT NOT NULL DEFAULT '{}',
	restarts       INTEGER NOT NULL DEFAULT 0,
	last_exit_code INTEGER,
	last_error     TEXT NOT NULL DEFAULT '',
	updated_at     INTEGER NOT NULL,
	PRIMARY KEY (worktree_id, name)
);

CREATE TABLE verify_runs (
	id          INTEGER PRIMARY KEY,
	worktree_id INTEGER NOT NULL REFERENCES worktrees (id) ON DELETE CASCADE,
	started_at  INTEGER NOT NULL,
	duration_ms INTEGER NOT NULL,
	git_commit  TEXT NOT NULL DEFAULT '',
	dirty       INTEGER NOT NULL DEFAULT 0,
	passed      INTEGER NOT NULL,
	checks      TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX verify_runs_worktree ON verify_runs (worktree_id, id);

-- One block of consecutive ports per worktree, machine-wide. Keyed by names,
-- not by worktrees.id, so a block can be reserved before the worktree row is
-- written; DeleteWorktree removes it with the worktree.
CREATE TABLE port_blocks (
	project    TEXT NOT NULL,
	worktree   TEXT NOT NULL,
	lo         INTEGER NOT NULL,
	hi         INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (project, worktree),
	CHECK (lo >= 1 AND hi <= 65535 AND lo <= hi)
);
CREATE INDEX port_blocks_lo ON port_blocks (lo);

CREATE TRIGGER port_blocks_no_overlap_insert
BEFORE INSERT ON port_blocks
WHEN EXISTS (SELECT 1 FROM port_blocks WHERE lo <= NEW.hi AND hi >= NEW.lo)
BEGIN
	SELECT RAISE(ABORT, 'port block overlaps another block');
END;

CREATE TRIGGER port_blocks_no_overlap_update
BEFORE UPDATE OF lo, hi ON port_blocks
WHEN EXISTS (
	SELECT 1 FROM port_blocks
	WHERE lo <= NEW.hi AND hi >= NEW.lo
	  AND NOT (project = OLD.project AND worktree = OLD.worktree))
BEGIN
	SELECT RAISE(ABORT, 'port block overlaps another block');
END;
`,
		// 2: what a later daemon needs to re-adopt a world: each process's run
		// spec, and the secret values resolved at up (so they stay redacted).
		`
ALTER TABLE services ADD COLUMN spec TEXT NOT NULL DEFAULT '';
ALTER TABLE worktrees ADD COLUMN secrets TEXT NOT NULL DEFAULT '[]';
`,
		// 3: which slice an adapter service owns, and through which adapter,
		// recorded before the slice is made: remove destroys exactly what up
		// made, even after binky.toml changed or an up failed halfway.
		`
ALTER TABLE services ADD COLUMN slice TEXT NOT NULL DEFAULT '';
ALTER TABLE services ADD COLUMN adapter TEXT NOT NULL DEFAULT '';
`,
		// 4: machine-wide settings by key: the admission bounds `binky
		// reserve` sets (docs/admission.md).
		`
CREATE TABLE settings (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
);
`,
		// 5: the home's identity, made once when the registry is created
		// (or first migrated): it marks this home's processes, port leases
		// and slice claims, so no other home on the machine touches them.
		`
CREATE TABLE home (
	one        INTEGER PRIMARY KEY CHECK (one = 1),
	id         TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
INSERT INTO home (one, id, created_at)
	VALUES (1, lower(hex(randomblob(8))), CAST(strftime('%s', 'now') AS INTEGER) * 1000000000);
`,
		// 6: why a world is degraded or failed, in words; and, per slice,
		// the admin_url and config it was made with as binky.toml wrote
		// them (tokens unresolved, so no secret), so remove reaches a
		// slice whose service left binky.toml.
		`
ALTER TABLE worktrees ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE services ADD COLUMN admin TEXT NOT NULL DEFAULT '';
ALTER TABLE services ADD COLUMN config TEXT NOT NULL DEFAULT '';
`,
		// 7: a cmd service's rendered spec, hashed when it last started, so
		// up on a running world restarts exactly what changed.
		`
ALTER TABLE services ADD COLUMN spec_hash TEXT NOT NULL DEFAULT '';
`,
		// 8: what up needs to tell a stale slice or a stopped service: the
		// golden key a slice was cloned from, a hash of the migrate inputs
		// last applied to it, and whether the user stopped the service
		// (`binky stop`), so up leaves it stopped.
		`
ALTER TABLE services ADD COLUMN golden_key TEXT NOT NULL DEFAULT '';
ALTER TABLE services ADD COLUMN migrate_sum TEXT NOT NULL DEFAULT '';
ALTER TABLE services ADD COLUMN stopped INTEGER NOT NULL DEFAULT 0;
`,
		// 9: the services a world runs when up chose some (--profile,
		// --only, --except), as that choice was written ('' for all of
		// them), so a later up without a choice keeps it.
		`
ALTER TABLE worktrees ADD COLUMN selection TEXT NOT NULL DEFAULT '';
`,
		// 10: names. The stable name a world was handed from its project's
		// stable_names (one holder per project), and every hostname a
		// world's services are served at, claimed at up (one holder in the
		// home), so two worlds never share a name and remove frees them.
		`
ALTER TABLE worktrees ADD COLUMN stable_name TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX worktrees_stable_name ON worktrees (project, stable_name) WHERE stable_name <> '';
CREATE TABLE hosts (
	host        TEXT PRIMARY KEY,
	worktree_id INTEGER NOT NULL REFERENCES worktrees (id) ON DELETE CASCADE,
	service     TEXT NOT NULL
);
CREATE INDEX hosts_worktree ON hosts (worktree_id);
`,
	}
}

func schema() sqlitemigration.Schema {
	return sqlitemigration.Schema{AppID: AppID, Migrations: migrations()}
}
