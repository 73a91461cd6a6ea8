#!/usr/bin/env bash
# Proxy benchmark: wrk against one small backend directly, through Binky's
# embedded proxy, and through Caddy's reverse_proxy, in one run. Prints
# requests/s and p99 latency for each, and what each proxy adds.
#
#   benchmarks/proxy/run.sh                 # defaults below
#   DURATION=20s CONNS=32 THREADS=1 ROUNDS=3 benchmarks/proxy/run.sh
#
# With ROUNDS > 1 the three targets are measured in turn that many times and
# the median of each column is reported, which steadies a busy machine.
#
# Needs wrk and caddy (Debian: apt-get install -y wrk caddy). Everything it
# starts is stopped on exit; it listens on 127.0.0.1 only.
set -euo pipefail

DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONNS=${CONNS:-32}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-1}
BACKEND_PORT=${BACKEND_PORT:-18080}
BINKY_PORT=${BINKY_PORT:-18081}
CADDY_PORT=${CADDY_PORT:-18082}
HOST=bench.localhost

for tool in wrk caddy go; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (apt-get install -y wrk caddy)" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/backend" ./benchmarks/proxy/backend && go build -o "$work/binkyproxy" ./benchmarks/proxy/binkyproxy)

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

"$work/backend" -addr "127.0.0.1:$BACKEND_PORT" & pids+=($!)
"$work/binkyproxy" -addr "127.0.0.1:$BINKY_PORT" -backend "127.0.0.1:$BACKEND_PORT" -host "$HOST" & pids+=($!)
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
for port in "$BACKEND_PORT" "$BINKY_PORT" "$CADDY_PORT"; do wait_port "$port"; done

# Each target must answer 200 with the backend's body before it is measured.
for port in "$BACKEND_PORT" "$BINKY_PORT" "$CADDY_PORT"; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $HOST" "http://127.0.0.1:$port/")
	[ "$code" = 200 ] || { echo "run.sh: port $port answered $code, not 200" >&2; exit 1; }
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
measure() { # name port round
	wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -H "Host: $HOST" "http://127.0.0.1:$2/" >/dev/null
	local out
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -H "Host: $HOST" "http://127.0.0.1:$2/")
	if grep -q "Non-2xx" <<<"$out"; then echo "run.sh: $1 returned errors:" >&2; echo "$out" >&2; exit 1; fi
	RPS[$1]+="$(awk '/^Requests\/sec:/ {print $2}' <<<"$out") "
	P50[$1]+="$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$out")") "
	P99[$1]+="$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")") "
}

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "wrk -t$THREADS -c$CONNS -d$DURATION x $ROUNDS round(s), $(nproc) CPUs, Host: $HOST"
for round in $(seq "$ROUNDS"); do
	measure direct "$BACKEND_PORT" "$round"
	measure binky "$BINKY_PORT" "$round"
	measure caddy "$CADDY_PORT" "$round"
done

if [ "$ROUNDS" -gt 1 ]; then
	for t in direct binky caddy; do echo "$t rounds: req/s ${RPS[$t]}| p99 ms ${P99[$t]}"; done
	echo "median of $ROUNDS rounds:"
fi
declare -A M_RPS M_P50 M_P99
for t in direct binky caddy; do
	M_RPS[$t]=$(median "${RPS[$t]}")
	M_P50[$t]=$(median "${P50[$t]}")
	M_P99[$t]=$(median "${P99[$t]}")
done
printf '%-8s %12s %10s %10s %14s\n' target "requests/s" "p50 ms" "p99 ms" "added p99 ms"
for t in direct binky caddy; do
	added=$(awk -v a="${M_P99[$t]}" -v b="${M_P99[direct]}" 'BEGIN { printf "%.3f", a - b }')
	[ "$t" = direct ] && added="-"
	printf '%-8s %12s %10s %10s %14s\n' "$t" "${M_RPS[$t]}" "${M_P50[$t]}" "${M_P99[$t]}" "$added"
done
awk -v b="${M_RPS[binky]}" -v c="${M_RPS[caddy]}" 'BEGIN { printf "binky/caddy throughput: %.2fx\n", b / c }'
