#!/usr/bin/env bash
# Binky's demo: two worlds of the example project in examples/demo, each with
# its own port block, its own process and its own SQLite slice. No server is
# needed. `make demo` builds everything first; `make demo-down` removes it all.
#
#   BINKY_DEMO_DIR   where the demo repository and state live (default .demo)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
demo=${BINKY_DEMO_DIR:-$top/.demo}
export BINKY_HOME="$demo/home"
export PATH="$top/bin:$PATH"
repo="$demo/repo"

if [ "${1:-}" = "down" ]; then
	if [ -S "$BINKY_HOME/daemon.sock" ]; then
		for wt in demo/alpha demo/beta; do binky remove --force -q "$wt" 2>/dev/null || true; done
		# Its "worlds keep running" is not so here: both were just removed.
		binky daemon stop >/dev/null || true
	fi
	rm -rf "$demo"
	echo "demo removed: both worlds, their slices and ports, and the daemon"
	exit 0
fi

if [ ! -d "$repo/.git" ]; then
	mkdir -p "$repo"
	cp "$top/examples/demo/binky.toml" "$repo/binky.toml"
	printf '# demo project\nThe binky demo. See binky.toml.\n' > "$repo/README.md"
	git -C "$repo" init -q -b main
	git -C "$repo" add -A
	git -C "$repo" -c user.name=binky -c user.email=demo@binky.invalid commit -q -m "demo project"
fi
cd "$repo"

echo "== binky up demo/alpha"
binky up demo/alpha
echo
echo "== binky up demo/beta"
binky up demo/beta
echo
echo "== binky status"
binky status
echo
echo "== binky env demo/alpha"
binky env demo/alpha
echo
api=$(binky env demo/alpha --dotenv | sed -n "s/^BINKY_API_URL='\(.*\)'$/\1/p")
direct=$(binky env demo/alpha --dotenv | sed -n "s/^BINKY_API_DIRECT_URL='\(.*\)'$/\1/p")
echo "== curl $api"
curl -fsS "$api" || { echo "(this machine does not resolve *.localhost to 127.0.0.1; the direct address works everywhere:)"; curl -fsS "$direct"; }
echo
echo "== binky verify demo/alpha"
binky verify demo/alpha
echo
cat <<MSG
Both worlds keep running. Try:
  export BINKY_HOME=$BINKY_HOME PATH=$top/bin:\$PATH
  curl $api
      visits count in alpha's own database
  curl $direct
      the same, without the proxy (where *.localhost does not resolve)
  binky env demo/beta
      beta's coordinates: another port, another slice
  binky logs demo/alpha api -f
      follow a service log
  make demo-down
      remove both worlds and stop the daemon
MSG
