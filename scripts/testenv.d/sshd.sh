# scripts/testenv.d/sshd.sh — sourced by scripts/testenv. OpenSSH's server
# (Debian's openssh-server) for the remote-host tests (e2e/remote_test.go).
#
# Nothing is started here: each test makes a "remote host" of its own — a
# network namespace with a veth pair and its own loopback, sshd on the
# namespace's address with its own host key, authorized_keys and pid file
# (e2e/sshhost_linux_test.go) — and removes it at exit. This installs the
# server (root, apt-get) and checks that network namespaces can be made
# here (root and the ip tool). The package's own sshd service is not
# started (Debian starts it only under systemd; none runs here) and nothing
# listens on the machine's addresses.
#
# The tests find sshd at BINKY_TEST_SSHD (default /usr/sbin/sshd).

SERVERS+=(sshd)

SSHD_BIN=${BINKY_TEST_SSHD:-/usr/sbin/sshd}

install_sshd() {
	[[ -x $SSHD_BIN ]] && return 0
	need_root "installing openssh-server"
	command -v apt-get >/dev/null 2>&1 || die "installing openssh-server needs apt-get (Debian); install OpenSSH's server yourself and set BINKY_TEST_SSHD"
	say "installing openssh-server (root)"
	# policy-rc.d 101: the package's scripts start no service.
	local policy=/usr/sbin/policy-rc.d made=
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null || {
		[[ -n $made ]] && rm -f "$policy"
		die "apt-get install openssh-server failed"
	}
	[[ -n $made ]] && rm -f "$policy"
	[[ -x $SSHD_BIN ]] || die "apt-get finished but $SSHD_BIN is missing"
}

# netns_probe: make and remove a namespace, so a test's failure to make
# one is not the first sign that this machine cannot.
netns_probe() {
	command -v ip >/dev/null 2>&1 || { say "sshd: the ip tool is missing (apt-get install iproute2)"; return 1; }
	[[ $(id -u) -eq 0 ]] || { say "sshd: the remote-host tests make network namespaces, which needs root"; return 1; }
	local ns=binky-probe-$$
	if ip netns add "$ns" 2>/dev/null; then
		ip netns exec "$ns" ip link set lo up 2>/dev/null
		ip netns del "$ns"
		return 0
	fi
	say "sshd: 'ip netns add' failed here (no CAP_SYS_ADMIN in this container?)"
	return 1
}

up_sshd() {
	install_sshd
	mkdir -p /run/sshd 2>/dev/null || true # sshd's privilege-separation directory
	if netns_probe; then
		say "sshd ready ($SSHD_BIN $("$SSHD_BIN" -V 2>&1 | head -1); network namespaces work); each remote-host test starts its own"
	else
		say "sshd installed; the remote-host tests will skip (fail under CI=true)"
	fi
}

down_sshd() {
	# Tests remove their own namespaces; these are what a killed test left.
	local ns
	for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^binky-t/ { print $1 }'); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -TERM 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null && say "removed the namespace $ns a test left"
	done
	say "sshd: nothing running started by this script"
}

status_sshd() {
	if [[ -x $SSHD_BIN ]]; then
		say "sshd: installed ($SSHD_BIN); tests start their own in a namespace"
	else
		say "sshd: not installed (scripts/testenv up sshd installs it, as root)"
	fi
}
