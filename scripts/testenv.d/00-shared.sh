# scripts/testenv.d/00-shared.sh — helpers the other testenv.d files use
# (sourced first: the files are read in name order). It adds no server.
#
# Built servers are kept in the cache directory, outside the repository:
#   BINKY_TESTENV_CACHE  default /var/cache/binky-testenv, else
#                        ~/.cache/binky-testenv when that is not writable

# cache_bin: the directory built test servers are kept in, made on first
# use.
cache_bin() {
	local dir=${BINKY_TESTENV_CACHE:-/var/cache/binky-testenv}
	if ! mkdir -p "$dir/bin" 2>/dev/null || [[ ! -w $dir/bin ]]; then
		dir=${XDG_CACHE_HOME:-$HOME/.cache}/binky-testenv
		mkdir -p "$dir/bin"
	fi
	echo "$dir/bin"
}

# stop_pidfile NAME PIDFILE PATTERN: stop the process PIDFILE names (when
# it still runs PATTERN) with TERM, then KILL after 5 s.
stop_pidfile() {
	local pid
	if ! pid=$(running "$2" "$3"); then
		say "$1 not running (nothing started by this script)"
		rm -f "$2"
		return 0
	fi
	kill -TERM "$pid"
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || { rm -f "$2"; say "$1 stopped (pid $pid)"; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$2"
	say "$1 killed (pid $pid did not stop within 5 s)"
}

# build_small NAME SRC: build the tiny main module in SRC into the cache
# as binky-testenv-NAME, again whenever a source file is newer than it.
build_small() {
	local bin out
	bin=$(cache_bin)
	out=$bin/binky-testenv-$1
	if [[ -x $out ]] && [[ -z $(find "$2" -newer "$out" -type f 2>/dev/null) ]]; then
		echo "$out"
		return 0
	fi
	command -v go >/dev/null 2>&1 || die "building $1 needs Go on PATH"
	say "building $1 into $bin" >&2
	(cd "$2" && GOWORK=off GOFLAGS=-buildvcs=false go build -o "$out.tmp" . && mv "$out.tmp" "$out") >&2 ||
		die "building $1 from $2 failed; see the output above"
	echo "$out"
}

ping_tcp() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
