# scripts/testenv.d/kfake.sh — a Kafka-protocol cluster for the kafka
# adapter's tests, sourced by scripts/testenv.
#
# kfake is franz-go's in-memory Kafka-protocol cluster (one broker), not
# Apache Kafka or Redpanda, neither of which this machine can get. `up`
# builds the small main in scripts/testenv.d/kfake (its own module, outside
# go.work; about 12 s cold) into the cache directory once and starts it on
# loopback. It keeps nothing on disk: `down` stops it and every topic goes
# with it; the binary stays in the cache (`scripts/testenv clean` removes
# it). A changed main.go or go.mod is rebuilt on the next `up`.
#
# Environment:
#   BINKY_TESTENV_CACHE  where built servers are kept (see 00-shared.sh)
#   BINKY_KFAKE_PORT     the broker's port (default 9092)
#   The kafka adapter's tests read BINKY_TEST_KAFKA_ADDR, default
#   kafka://127.0.0.1:9092

KFAKE_PORT=${BINKY_KFAKE_PORT:-9092}
KFAKE_DIR=$STATE/kfake
KFAKE_PID=$KFAKE_DIR/kfake.pid
KFAKE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/kfake" && pwd)

up_kfake() {
	local pid bin
	if pid=$(running "$KFAKE_PID" binky-testenv-kfake); then
		say "kfake already running (pid $pid, 127.0.0.1:$KFAKE_PORT)"
		return 0
	fi
	bin=$(build_small kfake "$KFAKE_SRC")
	mkdir -p "$KFAKE_DIR"
	rm -f "$KFAKE_PID"
	setsid "$bin" -addr "127.0.0.1:$KFAKE_PORT" </dev/null >"$KFAKE_DIR/kfake.log" 2>&1 &
	echo $! >"$KFAKE_PID"
	for _ in $(seq 50); do
		if ping_tcp "$KFAKE_PORT"; then
			say "kfake running (pid $(<"$KFAKE_PID"), 127.0.0.1:$KFAKE_PORT, log $KFAKE_DIR/kfake.log)"
			return 0
		fi
		kill -0 "$(<"$KFAKE_PID")" 2>/dev/null || die "kfake exited at start; see $KFAKE_DIR/kfake.log"
		sleep 0.1
	done
	die "kfake did not listen on 127.0.0.1:$KFAKE_PORT within 5 s; see $KFAKE_DIR/kfake.log"
}

down_kfake() { stop_pidfile kfake "$KFAKE_PID" binky-testenv-kfake; }

status_kfake() {
	local pid
	if pid=$(running "$KFAKE_PID" binky-testenv-kfake); then
		say "kfake: running, pid $pid, 127.0.0.1:$KFAKE_PORT (a Kafka-protocol cluster in memory, not Apache Kafka)"
	else
		say "kfake: stopped"
	fi
}

clean_kfake() {
	down_kfake
	rm -rf "$KFAKE_DIR" "$(cache_bin)/binky-testenv-kfake"
	say "kfake: cached binary removed"
}

SERVERS+=(kfake)
