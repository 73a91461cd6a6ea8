#!/usr/bin/env bash
# Daemon memory benchmark: the resident memory of one binky daemon with 2
# worlds idle, then with WORLDS worlds of 3 services each (two small HTTP
# backends with health checks, one sleep). Prints, at each step, VmRSS and
# VmHWM (/proc/PID/status), Pss (/proc/PID/smaps_rollup), open fds, threads
# (and RssAnon and RssFile: the heap and the mapped binary image), and,
# with TAGS=pprof (a daemon built with -tags pprof, served on
# BINKY_PPROF), goroutines and the Go runtime's own figures.
#
#   benchmarks/proxy/rss.sh                 # WORLDS=50 SETTLE=5
#   BIN=/path/to/dir benchmarks/proxy/rss.sh  # use DIR/binky, binkyd, backend
#
# Linux only (it reads /proc). Everything lives in a temporary BINKY_HOME and
# git repository; every world is removed and the daemon stopped on exit.
set -euo pipefail

WORLDS=${WORLDS:-50}
SETTLE=${SETTLE:-5}
# QUIET: how much longer to wait for the daemon's idle trim (BINKY_TRIM_AFTER,
# 20s by default) before the second reading of each step.
QUIET=${QUIET:-25}
RANGE=${RANGE:-19000}
PPROF_PORT=${PPROF_PORT:-38094}
PROXY_PORT=${PROXY_PORT:-38085}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
bin=${BIN:-$work}
export BINKY_HOME="$work/home" BINKY_PROXY_ADDR="127.0.0.1:$PROXY_PORT" BINKY_PROXY_TLS_ADDR=127.0.0.1:0 \
	BINKY_PPROF="127.0.0.1:$PPROF_PORT" GIT_CONFIG_GLOBAL=/dev/null \
	GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
binky() { (cd "$work/repo" && "$bin/binky" "$@"); }
made=0
cleanup() {
	for i in $(seq "$made"); do binky remove --force -q "w$i" >/dev/null 2>&1 || true; done
	binky daemon stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

if [ -z "${BIN:-}" ]; then
	(cd "$root" && go build -o "$work/binky" ./cmd/binky && { [ ! -d cmd/binkyd ] || go build -tags "${TAGS:-}" -o "$work/binkyd" ./cmd/binkyd; } &&
		go build -o "$work/backend" ./benchmarks/proxy/backend)
fi

mkdir -p "$work/repo"
cat >"$work/repo/binky.toml" <<EOF
[project]
name = "rss"
port_range = [$RANGE, $((RANGE + 999))]

[services.web]
cmd    = "exec '$bin/backend' -addr 127.0.0.1:\${self.port}"
url    = "web"
health = "http://127.0.0.1:\${self.port}/"

[services.api]
cmd    = "exec '$bin/backend' -addr 127.0.0.1:\${self.port}"
url    = "api"
health = "http://127.0.0.1:\${self.port}/"

[services.worker]
cmd = "exec sleep 3600"
EOF
(cd "$work/repo" && git init -q -b main && git add -A && git commit -q -m bench)

kib() { awk -v k="$2" '$1 == k":" {print $2}' "$1"; }
report() { # label
	local pid
	pid=$(head -1 "$BINKY_HOME/daemon.pid")
	local rss hwm pss fds thr gor
	rss=$(kib "/proc/$pid/status" VmRSS)
	hwm=$(kib "/proc/$pid/status" VmHWM)
	pss=$(kib "/proc/$pid/smaps_rollup" Pss)
	fds=$(ls "/proc/$pid/fd" | wc -l)
	thr=$(kib "/proc/$pid/status" Threads)
	gor=$(curl -s "http://127.0.0.1:$PPROF_PORT/debug/pprof/goroutine?debug=1" | awk 'NR == 1 {print $NF}' || true)
	# The Go runtime's own view: heap in use, goroutine stacks, all it mapped.
	local ms
	ms=$(curl -s "http://127.0.0.1:$PPROF_PORT/debug/pprof/heap?debug=1" |
		awk '$2 == "HeapInuse" || $2 == "Sys" || $2 == "NextGC" { printf "%s=%.1f ", $2, $4 / 1048576 }' || true)
	local anon file
	anon=$(kib "/proc/$pid/status" RssAnon)
	file=$(kib "/proc/$pid/status" RssFile)
	printf '%-26s %8.1f %8.1f %8.1f %8.1f %8.1f %6s %8s %11s   %s\n' "$1" "$(echo "$rss/1024" | bc -l)" "$(echo "$anon/1024" | bc -l)" \
		"$(echo "$file/1024" | bc -l)" "$(echo "$pss/1024" | bc -l)" \
		"$(echo "$hwm/1024" | bc -l)" "$fds" "$thr" "${gor:-?}" "$ms"
}

printf '%-26s %8s %8s %8s %8s %8s %6s %8s %11s   %s\n' step "RSS MiB" "anon" "file" "Pss MiB" "HWM MiB" fds threads goroutines "runtime MiB"
for i in $(seq "$WORLDS"); do
	binky up -q "w$i" >/dev/null
	made=$i
	if [ "$i" = 2 ]; then
		sleep "$SETTLE"
		report "2 worlds idle ${SETTLE}s"
		sleep "$QUIET"
		report "2 worlds quiet $((SETTLE + QUIET))s"
	fi
done
sleep "$SETTLE"
report "$WORLDS worlds idle ${SETTLE}s"
sleep "$QUIET"
report "$WORLDS worlds quiet $((SETTLE + QUIET))s"
sleep "${HOLD:-0}" # time to look at the daemon (smaps, pprof) before it stops
