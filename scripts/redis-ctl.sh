#!/usr/bin/env bash
# Controls the throwaway redis-server that scripts/testenv.sh starts for the
# replica suites (cluster/, the three-process acceptance): Debian's
# redis-server, no persistence (--save "", no appendonly), on 127.0.0.1 only.
#
#   redis-ctl.sh start     # start it (CARDHOUR_TEST_REDIS_DIR must be set)
#   redis-ctl.sh stop      # returns once it has exited
#   redis-ctl.sh status    # exit 0 when running
#
# The instance lives in CARDHOUR_TEST_REDIS_DIR: port (kept across stop/start,
# so clients reconnect to the same address), pid, log.
set -euo pipefail

ctl_prefix=redis-ctl
# shellcheck source=scripts/ctl-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"

base="$(ctl_need_dir CARDHOUR_TEST_REDIS_DIR)"
pidfile="$base/redis.pid"
portfile="$base/port"
log="$base/redis.log"

server="$(command -v redis-server || true)"
[[ -n "$server" || ! -x /usr/bin/redis-server ]] || server=/usr/bin/redis-server

cmd_start() {
	! ctl_already_running "$pidfile" || return 0
	[[ -n "$server" ]] || die "redis-server not installed (scripts/testenv.sh ensure_packages installs it)"
	mkdir -p "$base"
	[[ -s "$portfile" ]] || ctl_free_port >"$portfile"
	local port
	port="$(cat "$portfile")"
	ctl_launch "$pidfile" "$log" "$server" --bind 127.0.0.1 --port "$port" --save "" --appendonly no --dir "$base" \
		--daemonize no --protected-mode no --logfile "$log"
	ctl_wait_started redis-server "$ctl_launched" "$log" 10 "$port"
	ctl_say "on 127.0.0.1:$port (pid $ctl_launched)"
}

describe() {
	echo "on 127.0.0.1:$(cat "$portfile")"
}

ctl_main "$pidfile" "start|stop|status" "${1:-}"
