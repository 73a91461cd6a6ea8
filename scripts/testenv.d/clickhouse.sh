# scripts/testenv.d/clickhouse.sh — sourced by scripts/testenv. A private
# ClickHouse server (Debian's clickhouse-server, 18.16 on bookworm) for the
# clickhouse adapter's tests (plugins/http-adapters), on its own loopback
# ports with its config, data and logs under $STATE/clickhouse. The
# machine's /etc/clickhouse-server is only read (copied, then edited).
#
# It has a user binky with password binky-test-pw besides default (no
# password); the tests use binky, so basic auth is exercised.
#
# Environment:
#   BINKY_CLICKHOUSE_HTTP_PORT  HTTP interface port (default 18123)
#   BINKY_CLICKHOUSE_TCP_PORT   native protocol port (default 19000)
#   BINKY_TEST_CLICKHOUSE_URL   what the tests use as admin_url (default
#                               http://binky:binky-test-pw@127.0.0.1:18123)

SERVERS+=(clickhouse)

CH_HTTP_PORT=${BINKY_CLICKHOUSE_HTTP_PORT:-18123}
CH_TCP_PORT=${BINKY_CLICKHOUSE_TCP_PORT:-19000}
CH_DIR=$STATE/clickhouse
CH_PID=$CH_DIR/clickhouse.pid

install_clickhouse() {
	command -v clickhouse-server >/dev/null 2>&1 && return 0
	need_root "installing clickhouse-server"
	command -v apt-get >/dev/null 2>&1 || die "installing clickhouse-server needs apt-get (Debian); install ClickHouse yourself"
	say "installing clickhouse-server and clickhouse-client (root)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clickhouse-server clickhouse-client >/dev/null
	command -v clickhouse-server >/dev/null 2>&1 || die "apt-get finished but clickhouse-server is not on PATH"
}

ping_clickhouse() {
	command -v curl >/dev/null 2>&1 || return 1
	[[ $(curl -fsS -m 2 "http://127.0.0.1:$CH_HTTP_PORT/ping" 2>/dev/null) == Ok.* ]]
}

# clickhouse_config: config.xml and users.xml copied from the package's,
# with paths, ports and listen addresses made private.
clickhouse_config() {
	local src=/etc/clickhouse-server
	[[ -r $src/config.xml && -r $src/users.xml ]] || die "no $src/config.xml or users.xml to copy (is clickhouse-server installed?)"
	mkdir -p "$CH_DIR/etc" "$CH_DIR/data" "$CH_DIR/log"
	sed -e "s#/var/lib/clickhouse/#$CH_DIR/data/#g" \
		-e "s#/var/log/clickhouse-server/#$CH_DIR/log/#g" \
		-e "s#<http_port>[0-9]*</http_port>#<http_port>$CH_HTTP_PORT</http_port>#" \
		-e "s#<tcp_port>[0-9]*</tcp_port>#<tcp_port>$CH_TCP_PORT</tcp_port>#" \
		-e "s#<interserver_http_port>[0-9]*</interserver_http_port>#<interserver_http_port>$((CH_TCP_PORT + 9))</interserver_http_port>#" \
		-e "s#<listen_host>::1</listen_host>##" \
		-e "s#<level>[a-z]*</level>#<level>warning</level>#" \
		"$src/config.xml" >"$CH_DIR/etc/config.xml"
	# A user with a password, only from loopback.
	awk '
		/<\/users>/ && !done {
			print "        <binky>"
			print "            <password>binky-test-pw</password>"
			print "            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>"
			print "            <profile>default</profile>"
			print "            <quota>default</quota>"
			print "        </binky>"
			done = 1
		}
		{ print }
	' "$src/users.xml" >"$CH_DIR/etc/users.xml"
}

up_clickhouse() {
	local pid
	if pid=$(running "$CH_PID" clickhouse); then
		say "clickhouse already running (pid $pid, http://127.0.0.1:$CH_HTTP_PORT)"
		return 0
	fi
	install_clickhouse
	clickhouse_config
	rm -f "$CH_PID"
	(cd "$CH_DIR" && exec clickhouse-server --config-file="$CH_DIR/etc/config.xml" --pidfile="$CH_PID" \
		</dev/null >>"$CH_DIR/log/stdout.log" 2>&1 &)
	for _ in $(seq 100); do
		if ping_clickhouse; then
			say "clickhouse running (pid $(<"$CH_PID"), http://127.0.0.1:$CH_HTTP_PORT, log $CH_DIR/log)"
			return 0
		fi
		sleep 0.1
	done
	die "clickhouse did not answer on 127.0.0.1:$CH_HTTP_PORT within 10 s; see $CH_DIR/log"
}

down_clickhouse() {
	local pid
	if ! pid=$(running "$CH_PID" clickhouse); then
		say "clickhouse not running (nothing started by this script)"
		rm -f "$CH_PID"
		return 0
	fi
	kill -TERM "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || { rm -f "$CH_PID"; say "clickhouse stopped (pid $pid)"; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$CH_PID"
	say "clickhouse killed (pid $pid did not stop within 10 s)"
}

status_clickhouse() {
	local pid
	if pid=$(running "$CH_PID" clickhouse); then
		say "clickhouse: running, pid $pid, http://127.0.0.1:$CH_HTTP_PORT"
	elif command -v clickhouse-server >/dev/null 2>&1; then
		say "clickhouse: installed, stopped"
	else
		say "clickhouse: not installed (scripts/testenv up installs it, as root)"
	fi
}
