# scripts/testenv.d/ferretdb.sh — a MongoDB-protocol server for the mongodb
# adapter's tests, sourced by scripts/testenv.
#
# FerretDB 1.24 (MongoDB wire protocol over SQLite), not MongoDB, which this
# machine cannot get. `up` builds the small main in scripts/testenv.d/ferretdb
# (its own module, outside go.work; about 35 s cold) into the cache
# directory once, and starts it on loopback with its SQLite files under
# $STATE/ferretdb. FerretDB has no $out, so the mongodb adapter's clone
# answers unsupported there and binky's fallback runs. `down` stops it and
# keeps the data and the binary; `scripts/testenv clean` removes both.
#
# Environment:
#   BINKY_TESTENV_CACHE    where built servers are kept (see 00-shared.sh)
#   BINKY_FERRETDB_PORT    the server's port (default 27017)
#   The mongodb adapter's tests read BINKY_TEST_MONGO_URL, default
#   mongodb://127.0.0.1:27017

FERRETDB_PORT=${BINKY_FERRETDB_PORT:-27017}
FERRETDB_DIR=$STATE/ferretdb
FERRETDB_PID=$FERRETDB_DIR/ferretdb.pid
FERRETDB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/ferretdb" && pwd)

up_ferretdb() {
	local pid bin
	if pid=$(running "$FERRETDB_PID" binky-testenv-ferretdb); then
		say "ferretdb already running (pid $pid, 127.0.0.1:$FERRETDB_PORT)"
		return 0
	fi
	bin=$(build_small ferretdb "$FERRETDB_SRC")
	mkdir -p "$FERRETDB_DIR/data"
	rm -f "$FERRETDB_PID"
	setsid "$bin" -addr "127.0.0.1:$FERRETDB_PORT" -dir "$FERRETDB_DIR/data" \
		</dev/null >"$FERRETDB_DIR/ferretdb.log" 2>&1 &
	echo $! >"$FERRETDB_PID"
	for _ in $(seq 100); do
		if ping_tcp "$FERRETDB_PORT"; then
			say "ferretdb running (pid $(<"$FERRETDB_PID"), mongodb://127.0.0.1:$FERRETDB_PORT, log $FERRETDB_DIR/ferretdb.log)"
			return 0
		fi
		kill -0 "$(<"$FERRETDB_PID")" 2>/dev/null || die "ferretdb exited at start; see $FERRETDB_DIR/ferretdb.log"
		sleep 0.1
	done
	die "ferretdb did not listen on 127.0.0.1:$FERRETDB_PORT within 10 s; see $FERRETDB_DIR/ferretdb.log"
}

down_ferretdb() { stop_pidfile ferretdb "$FERRETDB_PID" binky-testenv-ferretdb; }

status_ferretdb() {
	local pid
	if pid=$(running "$FERRETDB_PID" binky-testenv-ferretdb); then
		say "ferretdb: running, pid $pid, mongodb://127.0.0.1:$FERRETDB_PORT (FerretDB on SQLite, not MongoDB)"
	else
		say "ferretdb: stopped"
	fi
}

clean_ferretdb() {
	down_ferretdb
	rm -rf "$FERRETDB_DIR" "$(cache_bin)/binky-testenv-ferretdb"
	say "ferretdb: data and cached binary removed"
}

SERVERS+=(ferretdb)
