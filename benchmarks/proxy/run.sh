#!/usr/bin/env bash
# Proxy benchmark: wrk against one small backend directly, through Binky's
# embedded proxy alone (the binkyproxy harness), through a real daemon (a
# `binky up` world whose one service is the backend, reached by its
# .localhost name on the daemon's proxy port), through Caddy's
# reverse_proxy and through vercel-labs/portless's proxy, in one run. Prints
# requests/s and p99 latency for each, and what each proxy adds over direct.
#
# Two arms (MODES): keepalive, wrk's usual kept-alive connections; close,
# a new connection per request (wrk sends "Connection: close", the server
# closes after answering and wrk connects again), which is what a browser
# opening many short connections, or a script calling curl in a loop,
# costs a proxy: accept, a goroutine, close.
#
#   benchmarks/proxy/run.sh                 # defaults below
#   DURATION=20s CONNS=32 THREADS=1 ROUNDS=3 benchmarks/proxy/run.sh
#   TARGETS="direct daemon caddy" MODES=close benchmarks/proxy/run.sh
#   SERVER_CPUS=0 LOAD_CPUS=1 ROUNDS=3 benchmarks/proxy/run.sh   # pinned
#   SERVER_CPUS=0 BACKEND_CPUS=1 LOAD_CPUS=1 benchmarks/proxy/run.sh # backend apart
#   BEFORE=main benchmarks/proxy/run.sh     # and the harness built from main
#
# BEFORE=<git ref> also builds the harness from that ref (git archive; the
# repository is untouched) and measures it as the target "before", on
# BEFORE_PORT, interleaved with the others: a before/after in one sitting.
#
# With ROUNDS > 1 the targets are measured in turn that many times (each
# round goes through every mode and target once, so a busy spell of the
# machine hits all of them alike) and the median of each column is reported
# with its range. SERVER_CPUS pins everything that serves (the backend, the
# daemon, the harness, Caddy, portless) with taskset, LOAD_CPUS pins wrk:
# the proxies then do not share a core with the load. BACKEND_CPUS pins the
# backend apart from the proxies (its command in the world's binky.toml
# runs under taskset; it would otherwise inherit the daemon's SERVER_CPUS):
# with SERVER_CPUS=0 BACKEND_CPUS=1 LOAD_CPUS=1 a proxy has core 0 to
# itself, and its requests/s is no longer what that core leaves after the
# backend (the layout of the issue-18 figures). Unset, the backend shares
# SERVER_CPUS as before.
#
# Besides wrk's figures, each row has the CPU time the process serving that
# port (the backend for direct, the proxy for the others; the backend's
# own share is not counted in a proxy's row) spent per request during the
# measured run, from /proc/PID/stat (found with ss): on a machine other
# work keeps busy, requests/s and p99 move with that work, while CPU per
# request is what the proxy itself costs, and its inverse what one core
# would carry.
#
# portless (the npm package of vercel-labs/portless, PORTLESS_VERSION) is
# installed with npm into the run's temporary directory, with its HOME and
# state directory there too, and started as `portless proxy start --no-tls
# -p $PORTLESS_PORT --foreground` (plain HTTP, no CA made or trusted, no
# hosts file written); `portless alias bench $BACKEND_PORT` routes
# bench.localhost to the backend. When npm or node is missing, the install
# fails, or the proxy does not answer, the portless target is skipped and
# the reason printed. PORTLESS=0 leaves it out.
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
PORTLESS_PORT=${PORTLESS_PORT:-18084}
PORTLESS_VERSION=${PORTLESS_VERSION:-0.15.6}
PORTLESS=${PORTLESS:-1}
BEFORE=${BEFORE:-}
BEFORE_PORT=${BEFORE_PORT:-18085}
TARGETS=${TARGETS:-direct binky daemon caddy portless}
MODES=${MODES:-keepalive close}
SERVER_CPUS=${SERVER_CPUS:-}
LOAD_CPUS=${LOAD_CPUS:-}
BACKEND_CPUS=${BACKEND_CPUS:-}
PPROF=${PPROF:-0}
PPROF_HARNESS=${PPROF_HARNESS:-18091}
PPROF_DAEMON=${PPROF_DAEMON:-18093}
HOST=bench.localhost
DAEMON_HOST=web.w1.bench.localhost

for tool in wrk caddy go git curl; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (apt-get install -y wrk caddy)" >&2; exit 2; }
done
# on_server / on_load prefix a command to pin it to SERVER_CPUS / LOAD_CPUS,
# when set (taskset execs it: $! of "${on_server[@]}" cmd & is cmd's pid).
on_server=(env) on_load=(env)
[ -z "$SERVER_CPUS" ] || on_server=(taskset -c "$SERVER_CPUS")
[ -z "$LOAD_CPUS" ] || on_load=(taskset -c "$LOAD_CPUS")
# backend_pin is the world service's command prefix that pins it to
# BACKEND_CPUS (the service runs under sh -c, exec'd).
backend_pin=""
[ -z "$BACKEND_CPUS" ] || backend_pin="taskset -c '$BACKEND_CPUS' "
has_target() { [[ " $TARGETS " == *" $1 "* ]]; }

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
pids=()
binky_env=(BINKY_HOME="$work/home" BINKY_PROXY_ADDR="127.0.0.1:$DAEMON_PORT" BINKY_PROXY_TLS_ADDR=127.0.0.1:0
	GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid)
[ "$PPROF" = 1 ] && binky_env+=(BINKY_PPROF="127.0.0.1:$PPROF_DAEMON")
binky() { (cd "$work/repo" && "${on_server[@]}" env "${binky_env[@]}" "$work/binky" "$@"); }
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
if [ -n "$BEFORE" ]; then
	mkdir -p "$work/before-src"
	git -C "$root" archive "$BEFORE" | tar -x -C "$work/before-src"
	(cd "$work/before-src" && go build -o "$work/binkyproxy-before" ./benchmarks/proxy/binkyproxy)
	TARGETS+=" before"
fi

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
cmd    = "exec $backend_pin'$work/backend' -addr 127.0.0.1:\${self.port}"
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
"${on_server[@]}" "$work/binkyproxy" -addr "127.0.0.1:$BINKY_PORT" -backend "127.0.0.1:$BACKEND_PORT" -host "$HOST" "${pprof_flag[@]}" & pids+=($!)
if [ -n "$BEFORE" ]; then
	"${on_server[@]}" "$work/binkyproxy-before" -addr "127.0.0.1:$BEFORE_PORT" -backend "127.0.0.1:$BACKEND_PORT" -host "$HOST" & pids+=($!)
fi
XDG_DATA_HOME="$work" XDG_CONFIG_HOME="$work" "${on_server[@]}" caddy run --config "$work/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 & pids+=($!)

# portless: installed and run inside $work, plain HTTP on PORTLESS_PORT. Its
# own HOME and state directory keep it off the user's ~/.portless, and
# PORTLESS_SYNC_HOSTS=0 off /etc/hosts.
portless_skip=""
portless_env=(HOME="$work/portless/home" PORTLESS_STATE_DIR="$work/portless/state" PORTLESS_SYNC_HOSTS=0
	PORTLESS_LAN=0 PORTLESS_HTTPS=0)
portless() { env "${portless_env[@]}" node "$work/portless/node_modules/portless/dist/cli.js" "$@"; }
start_portless() {
	if [ "$PORTLESS" != 1 ]; then portless_skip="PORTLESS=0"; return; fi
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then portless_skip="npm or node not found"; return; fi
	mkdir -p "$work/portless/home" "$work/portless/state"
	if ! (cd "$work/portless" && timeout 180 npm install --prefix "$work/portless" --no-audit --no-fund --no-save --loglevel=error \
		"portless@$PORTLESS_VERSION" >"$work/portless/npm.log" 2>&1); then
		portless_skip="npm install portless@$PORTLESS_VERSION failed: $(tail -1 "$work/portless/npm.log")"
		return
	fi
	"${on_server[@]}" env "${portless_env[@]}" node "$work/portless/node_modules/portless/dist/cli.js" \
		proxy start --no-tls --skip-trust -p "$PORTLESS_PORT" --foreground >"$work/portless/proxy.log" 2>&1 & pids+=($!)
	local up=0
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$PORTLESS_PORT") 2>/dev/null; then up=1; break; fi
		sleep 0.1
	done
	if [ "$up" = 0 ]; then
		portless_skip="its proxy did not listen on 127.0.0.1:$PORTLESS_PORT (node $(node --version); it asks for node 24): $(tail -1 "$work/portless/proxy.log")"
		return
	fi
	if ! portless alias bench "$BACKEND_PORT" >"$work/portless/alias.log" 2>&1; then
		portless_skip="portless alias failed: $(tail -1 "$work/portless/alias.log")"
		return
	fi
	for _ in $(seq 50); do # it picks up the route file with a short debounce
		[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $HOST" "http://127.0.0.1:$PORTLESS_PORT/")" = 200 ] && return
		sleep 0.1
	done
	portless_skip="its proxy did not answer 200 for $HOST: $(tail -1 "$work/portless/proxy.log")"
}
if has_target portless; then
	start_portless
	if [ -n "$portless_skip" ]; then
		echo "run.sh: portless skipped: $portless_skip" >&2
		TARGETS=$(tr ' ' '\n' <<<"$TARGETS" | grep -vx portless | tr '\n' ' ')
	fi
fi

wait_port() {
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "run.sh: nothing listening on 127.0.0.1:$1" >&2
	[ -f "$work/caddy.log" ] && cat "$work/caddy.log" >&2
	exit 1
}
for port in "$BINKY_PORT" "$CADDY_PORT" ${BEFORE:+"$BEFORE_PORT"}; do wait_port "$port"; done

declare -A PORT=([direct]=$BACKEND_PORT [binky]=$BINKY_PORT [daemon]=$DAEMON_PORT [caddy]=$CADDY_PORT [portless]=$PORTLESS_PORT [before]=$BEFORE_PORT)
declare -A VHOST=([direct]=$HOST [binky]=$HOST [daemon]=$DAEMON_HOST [caddy]=$HOST [portless]=$HOST [before]=$HOST)

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

# pid_of_port is the pid listening on 127.0.0.1:PORT; cpu_ticks a pid's
# user + system time in clock ticks.
pid_of_port() { command -v ss >/dev/null && ss -ltnpH "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
TCK=$(getconf CLK_TCK)
declare -A PID
for t in $TARGETS; do PID[$t]=$(pid_of_port "${PORT[$t]}" || true); done

declare -A RPS P99 P50 CPU
measure() { # mode target
	local port=${PORT[$2]} host=${VHOST[$2]} k="$1/$2" pid=${PID[$2]:-}
	local args=(-t"$THREADS" -c"$CONNS" -H "Host: $host")
	[ "$1" = close ] && args+=(-H "Connection: close")
	"${on_load[@]}" wrk "${args[@]}" -d"$WARMUP" "http://127.0.0.1:$port/" >/dev/null
	local out t0=0 t1=0
	[ -z "$pid" ] || t0=$(cpu_ticks "$pid")
	out=$("${on_load[@]}" wrk "${args[@]}" -d"$DURATION" --latency "http://127.0.0.1:$port/")
	[ -z "$pid" ] || t1=$(cpu_ticks "$pid")
	if grep -q "Non-2xx" <<<"$out"; then echo "run.sh: $2 ($1) returned errors:" >&2; echo "$out" >&2; exit 1; fi
	if grep -q "Socket errors" <<<"$out"; then echo "run.sh: $2 ($1): $(grep "Socket errors" <<<"$out" | sed 's/^ *//')" >&2; fi
	RPS[$k]+="$(awk '/^Requests\/sec:/ {printf "%d", $2}' <<<"$out") "
	P50[$k]+="$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$out")") "
	P99[$k]+="$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")") "
	if [ -n "$pid" ]; then
		CPU[$k]+="$(awk -v n="$(awk '/requests in/ {print $1}' <<<"$out")" -v d=$((t1 - t0)) -v hz="$TCK" 'BEGIN { printf "%.1f", d * 1e6 / hz / n }') "
	fi
}

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

pin="not pinned"
[ -n "$SERVER_CPUS$LOAD_CPUS$BACKEND_CPUS" ] && pin="servers on CPU ${SERVER_CPUS:-any}, backend on CPU ${BACKEND_CPUS:-${SERVER_CPUS:-any}}, wrk on CPU ${LOAD_CPUS:-any}"
echo "wrk -t$THREADS -c$CONNS -d$DURATION x $ROUNDS round(s), $(nproc) CPUs, $pin, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binky = the proxy harness (Host: $HOST); daemon = a binky up world (Host: $DAEMON_HOST)${BEFORE:+; before = the harness built from $BEFORE}"
[ -n "$portless_skip" ] && echo "portless: skipped ($portless_skip)"
for round in $(seq "$ROUNDS"); do
	for mode in $MODES; do
		for t in $TARGETS; do measure "$mode" "$t"; done
	done
done

declare -A M_RPS M_P50 M_P99 M_CPU
for mode in $MODES; do
	echo
	case $mode in
	keepalive) echo "== kept-alive connections ==" ;;
	close) echo "== a new connection per request (Connection: close) ==" ;;
	esac
	for t in $TARGETS; do
		k="$mode/$t"
		M_RPS[$k]=$(median "${RPS[$k]}")
		M_P50[$k]=$(median "${P50[$k]}")
		M_P99[$k]=$(median "${P99[$k]}")
		M_CPU[$k]=$(median "${CPU[$k]:-}")
	done
	printf '%-9s %11s %13s %8s %8s %15s %13s %11s %13s\n' target "requests/s" "(range)" "p50 ms" "p99 ms" "(range)" "added p99 ms" "cpu us/req" "(range)"
	for t in $TARGETS; do
		k="$mode/$t" added=- cpu=- cpur=
		if [ "$t" != direct ] && [ -n "${M_P99[$mode/direct]:-}" ]; then
			added=$(awk -v a="${M_P99[$k]}" -v b="${M_P99[$mode/direct]}" 'BEGIN { printf "%.3f", a - b }')
		fi
		[ -z "${CPU[$k]:-}" ] || { cpu=${M_CPU[$k]}; cpur="($(spread "${CPU[$k]}"))"; }
		printf '%-9s %11s %13s %8s %8s %15s %13s %11s %13s\n' "$t" "${M_RPS[$k]}" "($(spread "${RPS[$k]}"))" "${M_P50[$k]}" "${M_P99[$k]}" "($(spread "${P99[$k]}"))" "$added" "$cpu" "$cpur"
	done
	for t in binky daemon before; do
		[ -n "${M_RPS[$mode/$t]:-}" ] || continue
		line="$t:"
		for peer in caddy portless direct; do
			[ -n "${M_RPS[$mode/$peer]:-}" ] || continue
			line+=$(awk -v p="$peer" -v b="${M_RPS[$mode/$t]}" -v c="${M_RPS[$mode/$peer]}" 'BEGIN { printf " %.2fx %s req/s;", b / c, p }')
		done
		for peer in caddy portless; do
			[ -n "${M_CPU[$mode/$peer]:-}" ] && [ -n "${M_CPU[$mode/$t]:-}" ] || continue
			line+=$(awk -v p="$peer" -v b="${M_CPU[$mode/$t]}" -v c="${M_CPU[$mode/$peer]}" 'BEGIN { if (b > 0) printf " %.2fx %s requests per CPU second;", c / b, p }')
		done
		if [ -n "${M_P99[$mode/direct]:-}" ] && [ -n "${M_P99[$mode/caddy]:-}" ]; then
			line+=$(awk -v b="${M_P99[$mode/$t]}" -v c="${M_P99[$mode/caddy]}" -v d="${M_P99[$mode/direct]}" \
				'BEGIN { if (c - d > 0) printf " p99 added %.2f of caddy'"'"'s", (b - d) / (c - d); else printf " caddy adds nothing at p99" }')
		fi
		echo "$line"
	done
done
if [ "$PPROF" = 1 ]; then
	echo "pprof: harness http://127.0.0.1:$PPROF_HARNESS/debug/pprof/, daemon http://127.0.0.1:$PPROF_DAEMON/debug/pprof/ for ${PPROF_HOLD:-60}s"
	sleep "${PPROF_HOLD:-60}"
fi
