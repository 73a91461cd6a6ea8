#!/usr/bin/env bash
# Proxy benchmark: wrk against one small backend directly, through Binky's
# embedded proxy alone (the binkyproxy harness), through a real daemon (a
# `binky up` world whose one service is the backend, reached by its
# .localhost name on the daemon's proxy port), and through Caddy's
# reverse_proxy, in one run. Prints requests/s and p99 latency for each, and
# what each proxy adds over direct.
#
#   benchmarks/proxy/run.sh                 # defaults below
#   DURATION=20s CONNS=32 THREADS=1 ROUNDS=3 benchmarks/proxy/run.sh
#   TARGETS="direct daemon caddy" benchmarks/proxy/run.sh
#
# With ROUNDS > 1 the targets are measured in turn that many times and the
# median of each column is reported, which steadies a busy machine.
#
# It builds binky (and binkyd), makes a throwaway BINKY_HOME and git
# repository under a temporary directory and runs `binky up w1` there with
# BINKY_PROXY_ADDR=127.0.0.1:$DAEMON_PORT. That world's one service is the
# backend: direct, the harness, the daemon and Caddy all reach that same
# process. The world is removed and its daemon stopped on exit. PPROF=1
# starts the harness and the daemon (built with -tags pprof) with pprof on
# loopback ports ($PPROF_HARNESS, and BINKY_PPROF=127.0.0.1:$PPROF_DAEMON) and keeps them
# up for PPROF_HOLD seconds after measuring, so that
#   go tool pprof -seconds 5 http://127.0.0.1:$PPROF_DAEMON/debug/pprof/profile
# can be run against a wrk started by hand.
#
# Needs wrk and caddy (Debian: apt-get install -y wrk caddy). Everything it
# starts is stopped on exit; it listens on 127.0.0.1 only.
set -euo pipefail

DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONNS=${CONNS:-32}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-1}
BINKY_PORT=${BINKY_PORT:-18081}
CADDY_PORT=${CADDY_PORT:-18082}
DAEMON_PORT=${DAEMON_PORT:-18083}
DAEMON_RANGE=${DAEMON_RANGE:-18100}
BACKEND_PORT=$DAEMON_RANGE # the world's one service gets the range's first port
TARGETS=${TARGETS:-direct binky daemon caddy}
PPROF=${PPROF:-0}
PPROF_HARNESS=${PPROF_HARNESS:-18091}
PPROF_DAEMON=${PPROF_DAEMON:-18093}
HOST=bench.localhost
DAEMON_HOST=web.w1.bench.localhost

for tool in wrk caddy go git curl; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (apt-get install -y wrk caddy)" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
pids=()
binky_env=(BINKY_HOME="$work/home" BINKY_PROXY_ADDR="127.0.0.1:$DAEMON_PORT" BINKY_PROXY_TLS_ADDR=127.0.0.1:0
	GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid)
[ "$PPROF" = 1 ] && binky_env+=(BINKY_PPROF="127.0.0.1:$PPROF_DAEMON")
binky() { (cd "$work/repo" && env "${binky_env[@]}" "$work/binky" "$@"); }
daemon_up=0
cleanup() {
	if [ "$daemon_up" = 1 ]; then
		binky remove --force -q w1 >/dev/null 2>&1 || true
		binky daemon stop >/dev/null 2>&1 || true
	fi
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

TAGS= # the daemon serves BINKY_PPROF only when built with -tags pprof
[ "$PPROF" = 1 ] && TAGS=pprof
(cd "$root" && go build -o "$work/backend" ./benchmarks/proxy/backend && go build -o "$work/binkyproxy" ./benchmarks/proxy/binkyproxy &&
	go build -o "$work/binky" ./cmd/binky && { [ ! -d cmd/binkyd ] || go build -tags "$TAGS" -o "$work/binkyd" ./cmd/binkyd; })

# The daemon-served world, made first: its one service is the backend every
# target reaches, so all of them measure against the same process (a world's
# service runs in the world's cgroup where the machine has cgroup v2, which
# makes loopback traffic to it measurably slower than to a bare process).
mkdir -p "$work/repo"
cat >"$work/repo/binky.toml" <<EOF
[project]
name = "bench"
port_range = [$DAEMON_RANGE, $((DAEMON_RANGE + 99))]

[services.web]
cmd    = "exec '$work/backend' -addr 127.0.0.1:\${self.port}"
url    = "web"
health = "http://127.0.0.1:\${self.port}/"
EOF
(cd "$work/repo" && env "${binky_env[@]}" sh -c 'git init -q -b main && git add -A && git commit -q -m bench')
daemon_up=1
binky up -q w1 >"$work/up.log" 2>&1 || { echo "run.sh: binky up failed:" >&2; cat "$work/up.log" "$work/home/daemon.log" >&2; exit 1; }
curl -s -o /dev/null "http://127.0.0.1:$BACKEND_PORT/" ||
	{ echo "run.sh: the world's service is not on 127.0.0.1:$BACKEND_PORT:" >&2; cat "$work/up.log" >&2; exit 1; }


cat >"$work/Caddyfile" <<EOF
{
	admin off
	auto_https off
}
http://:$CADDY_PORT {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:$BACKEND_PORT
}
EOF

pprof_flag=()
[ "$PPROF" = 1 ] && pprof_flag=(-pprof "127.0.0.1:$PPROF_HARNESS")
"$work/binkyproxy" -addr "127.0.0.1:$BINKY_PORT" -backend "127.0.0.1:$BACKEND_PORT" -host "$HOST" "${pprof_flag[@]}" & pids+=($!)
XDG_DATA_HOME="$work" XDG_CONFIG_HOME="$work" caddy run --config "$work/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 & pids+=($!)

wait_port() {
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "run.sh: nothing listening on 127.0.0.1:$1" >&2
	[ -f "$work/caddy.log" ] && cat "$work/caddy.log" >&2
	exit 1
}
for port in "$BINKY_PORT" "$CADDY_PORT"; do wait_port "$port"; done

declare -A PORT=([direct]=$BACKEND_PORT [binky]=$BINKY_PORT [daemon]=$DAEMON_PORT [caddy]=$CADDY_PORT)
declare -A VHOST=([direct]=$HOST [binky]=$HOST [daemon]=$DAEMON_HOST [caddy]=$HOST)

# Each target must answer 200 with the backend's body before it is measured.
for t in $TARGETS; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: ${VHOST[$t]}" "http://127.0.0.1:${PORT[$t]}/")
	[ "$code" = 200 ] || { echo "run.sh: $t (port ${PORT[$t]}) answered $code, not 200" >&2; exit 1; }
done

# to_ms turns wrk's "512.00us" / "1.23ms" / "2.00s" into milliseconds.
to_ms() {
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
		else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
		else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 }
		else printf "nan" }'
}

declare -A RPS P99 P50
measure() { # name
	local port=${PORT[$1]} host=${VHOST[$1]}
	wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -H "Host: $host" "http://127.0.0.1:$port/" >/dev/null
	local out
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -H "Host: $host" "http://127.0.0.1:$port/")
	if grep -q "Non-2xx" <<<"$out"; then echo "run.sh: $1 returned errors:" >&2; echo "$out" >&2; exit 1; fi
	RPS[$1]+="$(awk '/^Requests\/sec:/ {print $2}' <<<"$out") "
	P50[$1]+="$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$out")") "
	P99[$1]+="$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")") "
}

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "wrk -t$THREADS -c$CONNS -d$DURATION x $ROUNDS round(s), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binky = the proxy harness (Host: $HOST); daemon = a binky up world (Host: $DAEMON_HOST)"
for round in $(seq "$ROUNDS"); do
	for t in $TARGETS; do measure "$t"; done
done

if [ "$ROUNDS" -gt 1 ]; then
	for t in $TARGETS; do echo "$t rounds: req/s ${RPS[$t]}| p99 ms ${P99[$t]}"; done
	echo "median of $ROUNDS rounds:"
fi
declare -A M_RPS M_P50 M_P99
for t in $TARGETS; do
	M_RPS[$t]=$(median "${RPS[$t]}")
	M_P50[$t]=$(median "${P50[$t]}")
	M_P99[$t]=$(median "${P99[$t]}")
done
printf '%-8s %12s %10s %10s %14s\n' target "requests/s" "p50 ms" "p99 ms" "added p99 ms"
for t in $TARGETS; do
	added=-
	if [ "$t" != direct ] && [ -n "${M_P99[direct]:-}" ]; then
		added=$(awk -v a="${M_P99[$t]}" -v b="${M_P99[direct]}" 'BEGIN { printf "%.3f", a - b }')
	fi
	printf '%-8s %12s %10s %10s %14s\n' "$t" "${M_RPS[$t]}" "${M_P50[$t]}" "${M_P99[$t]}" "$added"
done
if [ -n "${M_RPS[caddy]:-}" ]; then
	for t in binky daemon; do
		[ -n "${M_RPS[$t]:-}" ] || continue
		awk -v t="$t" -v b="${M_RPS[$t]}" -v c="${M_RPS[caddy]}" 'BEGIN { printf "%s/caddy throughput: %.2fx\n", t, b / c }'
		if [ -n "${M_P99[direct]:-}" ]; then
			awk -v t="$t" -v b="${M_P99[$t]}" -v c="${M_P99[caddy]}" -v d="${M_P99[direct]}" \
				'BEGIN { if (c - d > 0) printf "%s p99 added / caddy p99 added: %.2f\n", t, (b - d) / (c - d) }'
		fi
	done
fi
if [ "$PPROF" = 1 ]; then
	echo "pprof: harness http://127.0.0.1:$PPROF_HARNESS/debug/pprof/, daemon http://127.0.0.1:$PPROF_DAEMON/debug/pprof/ for ${PPROF_HOLD:-60}s"
	sleep "${PPROF_HOLD:-60}"
fi
