# scripts/testenv.d/rabbitmq.sh — sourced by scripts/testenv. The HTTP
# management API of the machine's own RabbitMQ (127.0.0.1:5672), for the
# rabbitmq adapter's tests (plugins/http-adapters).
#
# The RabbitMQ server is shared: this file never starts or stops it. `up`
# enables the rabbitmq_management plugin on the running node (online, no
# restart), with its listener set to 127.0.0.1 first, and records in
# $STATE/rabbitmq that it did; `down` disables the plugin again only when
# `up` enabled it, and restores /etc/rabbitmq/enabled_plugins as it found
# it. Enabling needs root (rabbitmq-plugins writes /etc/rabbitmq and talks
# to the node with the Erlang cookie).
#
# Environment:
#   BINKY_RABBITMQ_MGMT_PORT   management port (default 15672)
#   BINKY_TEST_RABBITMQ_ADMIN  what the tests use as admin_url (default
#                              http://guest:guest@127.0.0.1:15672)
#   BINKY_TEST_RABBITMQ_AMQP   the AMQP port resolve puts in addresses
#                              (default 5672)

SERVERS+=(rabbitmq)

RABBITMQ_MGMT_PORT=${BINKY_RABBITMQ_MGMT_PORT:-15672}
RABBITMQ_DIR=$STATE/rabbitmq
RABBITMQ_MARK=$RABBITMQ_DIR/enabled-by-testenv
RABBITMQ_PLUGINS_FILE=/etc/rabbitmq/enabled_plugins

rabbitmq_mgmt_up() {
	command -v curl >/dev/null 2>&1 || return 1
	curl -fsS -m 3 -o /dev/null "http://127.0.0.1:$RABBITMQ_MGMT_PORT/api/overview" -u guest:guest 2>/dev/null
}

rabbitmq_node_up() {
	command -v rabbitmqctl >/dev/null 2>&1 && rabbitmqctl -q ping >/dev/null 2>&1
}

up_rabbitmq() {
	if rabbitmq_mgmt_up; then
		say "rabbitmq management API already answers on 127.0.0.1:$RABBITMQ_MGMT_PORT"
		return 0
	fi
	rabbitmq_node_up || die "RabbitMQ is not running on this machine (rabbitmqctl ping failed); start it (it is the machine's server, not one testenv runs) and rerun"
	need_root "enabling the rabbitmq_management plugin"
	mkdir -p "$RABBITMQ_DIR"
	# What the plugins file held before, so down can put it back.
	if [[ ! -e $RABBITMQ_MARK ]]; then
		if [[ -e $RABBITMQ_PLUGINS_FILE ]]; then
			cp -p "$RABBITMQ_PLUGINS_FILE" "$RABBITMQ_DIR/enabled_plugins.before"
		else
			rm -f "$RABBITMQ_DIR/enabled_plugins.before"
		fi
	fi
	# The listener goes on loopback before the plugin starts; the node's
	# config file is left alone.
	rabbitmqctl -q eval "application:load(rabbitmq_management), application:set_env(rabbitmq_management, tcp_config, [{ip, \"127.0.0.1\"}, {port, $RABBITMQ_MGMT_PORT}])." >/dev/null
	rabbitmq-plugins -q enable rabbitmq_management >/dev/null
	touch "$RABBITMQ_MARK"
	for _ in $(seq 100); do
		if rabbitmq_mgmt_up; then
			say "rabbitmq management API enabled on 127.0.0.1:$RABBITMQ_MGMT_PORT (down disables it again)"
			return 0
		fi
		sleep 0.1
	done
	die "the rabbitmq management API did not answer on 127.0.0.1:$RABBITMQ_MGMT_PORT within 10 s; see rabbitmqctl status"
}

down_rabbitmq() {
	if [[ ! -e $RABBITMQ_MARK ]]; then
		say "rabbitmq: management plugin not enabled by this script (left as found)"
		return 0
	fi
	need_root "disabling the rabbitmq_management plugin"
	if rabbitmq_node_up; then
		rabbitmq-plugins -q disable rabbitmq_management rabbitmq_management_agent rabbitmq_web_dispatch >/dev/null
	else
		rabbitmq-plugins -q disable --offline rabbitmq_management rabbitmq_management_agent rabbitmq_web_dispatch >/dev/null
	fi
	if [[ -e $RABBITMQ_DIR/enabled_plugins.before ]]; then
		cp -p "$RABBITMQ_DIR/enabled_plugins.before" "$RABBITMQ_PLUGINS_FILE"
	else
		rm -f "$RABBITMQ_PLUGINS_FILE"
	fi
	rm -f "$RABBITMQ_MARK" "$RABBITMQ_DIR/enabled_plugins.before"
	say "rabbitmq management plugin disabled (enabled_plugins restored)"
}

status_rabbitmq() {
	if rabbitmq_mgmt_up; then
		if [[ -e $RABBITMQ_MARK ]]; then
			say "rabbitmq: management API on 127.0.0.1:$RABBITMQ_MGMT_PORT (enabled by testenv)"
		else
			say "rabbitmq: management API on 127.0.0.1:$RABBITMQ_MGMT_PORT (enabled before testenv)"
		fi
	elif rabbitmq_node_up; then
		say "rabbitmq: running, management API off (scripts/testenv up enables it, as root)"
	else
		say "rabbitmq: not running"
	fi
}
