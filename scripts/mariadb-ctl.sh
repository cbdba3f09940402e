#!/usr/bin/env bash
# Controls the throwaway MariaDB that scripts/testenv.sh created, so a test can
# take the database away under a running portal and bring it back on the same
# port and datadir to check that the portal recovers:
#
#   "$CARDHOUR_TEST_MARIADB_CTL" stop     # returns once mariadbd has exited
#   "$CARDHOUR_TEST_MARIADB_CTL" start    # returns once it answers again
#   "$CARDHOUR_TEST_MARIADB_CTL" status   # exit 0 when running
#
# The instance is found through CARDHOUR_TEST_MARIADB_DIR (the datadir); its
# parent directory holds the port, socket, pid file and logs. `init` (used by
# testenv.sh) creates a fresh datadir there.
#
# mariadbd is started detached with all three standard streams on the log, so a
# caller that captures this script's output (exec.Command(...).Output()) is not
# kept waiting by the server holding its pipe open.
set -euo pipefail

ctl_prefix=mariadb-ctl
# shellcheck source=scripts/ctl-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"
ctl_path_sbin

datadir="$(ctl_need_dir CARDHOUR_TEST_MARIADB_DIR)"
base="$(dirname "$datadir")"
sock="$base/mysqld.sock"
pidfile="$base/mariadbd.pid"
log="$base/mariadbd.log"
portfile="$base/port"

cmd_init() {
	[[ ! -e "$datadir" ]] || die "$datadir already exists"
	mkdir -p "$datadir"
	local user=()
	# mariadbd refuses to run as root unless told to; the CI runs as root.
	[[ "$(id -u)" != 0 ]] || user=(--user=root)
	# --no-defaults: never read /etc/mysql, so the host's configuration cannot leak in.
	# normal root auth (empty password over the socket) lets testenv.sh create the test user.
	if ! mariadb-install-db --no-defaults "${user[@]}" \
		--datadir="$datadir" \
		--auth-root-authentication-method=normal \
		--skip-test-db >"$base/install.log" 2>&1; then
		ctl_log_tail "$base/install.log"
		die "mariadb-install-db failed"
	fi
}

cmd_start() {
	! ctl_already_running "$pidfile" || return 0
	[[ -d "$datadir" ]] || die "no datadir $datadir"
	# The port is chosen once and then kept, so DSNs handed out stay valid across a restart.
	[[ -s "$portfile" ]] || ctl_free_port >"$portfile"
	local port
	port="$(cat "$portfile")"
	rm -f "$pidfile"

	local user=()
	[[ "$(id -u)" != 0 ]] || user=(--user=root)
	# utf8mb4 server-wide because the schema and the DSN assume it.
	# default-time-zone +08:00 like a Tianyi RDS instance in China: code that lets the
	# server pick "now" (CURRENT_TIMESTAMP, NOW()) instead of storing UTC from Go shows up here.
	# The innodb settings trade durability for speed; the data is thrown away anyway.
	# setsid: a Ctrl-C aimed at the test run must not kill the server before the
	# trap stops it cleanly.
	setsid mariadbd --no-defaults "${user[@]}" \
		--datadir="$datadir" \
		--socket="$sock" \
		--pid-file="$pidfile" \
		--port="$port" \
		--bind-address=127.0.0.1 \
		--skip-name-resolve \
		--character-set-server=utf8mb4 \
		--collation-server=utf8mb4_unicode_ci \
		--default-time-zone=+08:00 \
		--max-connections=500 \
		--innodb-buffer-pool-size=256M \
		--innodb-flush-log-at-trx-commit=0 \
		--innodb-doublewrite=0 \
		--sync-binlog=0 \
		--log-error="$log" \
		</dev/null >>"$log" 2>&1 &
	local launched=$!

	# Bounded wait. Ping through this instance's own socket, not TCP: on a port
	# clash another server would answer on TCP while ours aborts. mariadbd creates
	# the socket only after binding the TCP port, so an answer here means both are ours.
	local i
	for i in $(seq 1 120); do
		if mariadb-admin --no-defaults --protocol=socket --socket="$sock" \
			--connect-timeout=2 -uroot ping >/dev/null 2>&1; then
			# ping succeeds on "access denied" too, which is all it needs to show.
			break
		fi
		if ! ctl_alive "$launched" && ! ctl_alive "$(ctl_current_pid "$pidfile" || true)"; then
			ctl_log_tail "$log"
			die "mariadbd exited during start-up"
		fi
		if ((i == 120)); then
			ctl_log_tail "$log"
			kill -TERM "$launched" 2>/dev/null || true
			die "mariadbd did not answer on 127.0.0.1:$port within 60 s"
		fi
		sleep 0.5
	done
	# The pid file appears a moment after the listener in some versions.
	for i in $(seq 1 20); do
		[[ -s "$pidfile" ]] && break
		sleep 0.25
	done
	ctl_say "running on 127.0.0.1:$port (pid $(ctl_current_pid "$pidfile" || echo "$launched"))"
}

# SIGTERM is mariadbd's clean shutdown; no credentials needed, unlike mariadb-admin shutdown.
cmd_stop() {
	ctl_stop "$pidfile" 60 loud
}

describe() {
	echo "running on 127.0.0.1:$(cat "$portfile")"
}

case "${1:-}" in
init) cmd_init ;;
start) cmd_start ;;
stop) cmd_stop ;;
restart)
	cmd_stop
	cmd_start
	;;
status) ctl_status "$pidfile" describe ;;
*)
	echo "usage: $0 stop|start|restart|status|init" >&2
	exit 2
	;;
esac
