# scripts/testenv.d/minio.sh — MinIO (S3) for the s3 adapter's tests,
# sourced by scripts/testenv.
#
# MinIO has no Debian package: `up` builds it once per machine with
# `go install github.com/minio/minio@latest` (about 150 s and 1.5 GB of
# memory, a 150 MB binary) into the cache directory, outside the repository, and
# reuses that binary ever after. `down` stops the server and leaves the
# binary (and the Go build cache); `scripts/testenv clean` deletes the
# binary too. Data lives under $STATE/minio and goes with `clean`.
#
# Environment:
#   BINKY_TESTENV_CACHE  where built servers are kept (see 00-shared.sh)
#   BINKY_MINIO_PORT     MinIO's S3 port (default 9000; the console,
#                        which is switched off, would take the next port)
#   The s3 adapter's tests read BINKY_TEST_S3_URL, default
#   http://binky:binky-testenv-secret@127.0.0.1:9000

MINIO_PORT=${BINKY_MINIO_PORT:-9000}
MINIO_DIR=$STATE/minio
MINIO_PID=$MINIO_DIR/minio.pid
MINIO_USER=binky
MINIO_PASSWORD=binky-testenv-secret

install_minio() {
	local bin
	bin=$(cache_bin)
	if [[ -x $bin/minio ]]; then
		echo "$bin/minio"
		return 0
	fi
	command -v go >/dev/null 2>&1 || die "building MinIO needs Go on PATH; or put a minio binary at $bin/minio"
	say "building MinIO into $bin (once per machine: about 150 s and 1.5 GB of memory)" >&2
	local start=$SECONDS
	GOBIN=$bin GOFLAGS=-buildvcs=false go install github.com/minio/minio@latest >&2 ||
		die "go install github.com/minio/minio@latest failed; see the output above"
	say "built MinIO in $((SECONDS - start)) s" >&2
	echo "$bin/minio"
}

ping_minio() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$MINIO_PORT/minio/health/live" 2>/dev/null) || return 1
	[[ $code == 200 ]]
}

up_minio() {
	local pid bin
	if pid=$(running "$MINIO_PID" minio); then
		say "minio already running (pid $pid, 127.0.0.1:$MINIO_PORT)"
		return 0
	fi
	bin=$(install_minio)
	mkdir -p "$MINIO_DIR/data"
	rm -f "$MINIO_PID"
	MINIO_ROOT_USER=$MINIO_USER MINIO_ROOT_PASSWORD=$MINIO_PASSWORD MINIO_BROWSER=off \
		MINIO_UPDATE=off MINIO_CI_CD=on \
		setsid "$bin" server "$MINIO_DIR/data" --quiet \
		--address "127.0.0.1:$MINIO_PORT" --console-address "127.0.0.1:$((MINIO_PORT + 1))" \
		</dev/null >"$MINIO_DIR/minio.log" 2>&1 &
	echo $! >"$MINIO_PID"
	for _ in $(seq 100); do
		if ping_minio; then
			say "minio running (pid $(<"$MINIO_PID"), http://127.0.0.1:$MINIO_PORT, log $MINIO_DIR/minio.log)"
			return 0
		fi
		kill -0 "$(<"$MINIO_PID")" 2>/dev/null || die "minio exited at start; see $MINIO_DIR/minio.log"
		sleep 0.1
	done
	die "minio did not answer on 127.0.0.1:$MINIO_PORT within 10 s; see $MINIO_DIR/minio.log"
}

down_minio() { stop_pidfile minio "$MINIO_PID" minio; }

status_minio() {
	local pid
	if pid=$(running "$MINIO_PID" minio); then
		say "minio: running, pid $pid, http://127.0.0.1:$MINIO_PORT (binary $(cache_bin)/minio)"
	elif [[ -x $(cache_bin)/minio ]]; then
		say "minio: built ($(cache_bin)/minio), stopped"
	else
		say "minio: not built (scripts/testenv up builds it, about 150 s)"
	fi
}

clean_minio() {
	down_minio
	rm -rf "$MINIO_DIR" "$(cache_bin)/minio"
	say "minio: data and cached binary removed"
}

SERVERS+=(minio)
