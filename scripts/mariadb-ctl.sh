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

case ":$PATH:" in
*:/usr/sbin:*) ;;
*) PATH="$PATH:/usr/sbin" ;;
esac

die() {
	echo "mariadb-ctl: $*" >&2
	exit 1
}

[[ -n "${CARDHOUR_TEST_MARIADB_DIR:-}" ]] || die "CARDHOUR_TEST_MARIADB_DIR is not set (run under scripts/testenv.sh)"
datadir="$CARDHOUR_TEST_MARIADB_DIR"
base="$(dirname "$datadir")"
sock="$base/mysqld.sock"
pidfile="$base/mariadbd.pid"
log="$base/mariadbd.log"
portfile="$base/port"

# kill -0 is not enough: an exited server whose parent has not reaped it yet is a
# zombie that still "exists", and stop would then wait for nothing.
alive() {
	local pid="$1" state
	[[ -n "$pid" && -r "/proc/$pid/stat" ]] || return 1
	state="$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" || return 1
	[[ "$state" != Z && "$state" != X ]]
}

current_pid() {
	[[ -s "$pidfile" ]] && cat "$pidfile"
}

# A port nobody listens on, from a random base so parallel runs rarely collide.
# Plain bash: ss when it is there, otherwise a /dev/tcp connect attempt.
free_port() {
	local i p
	for i in $(seq 0 199); do
		p=$((20000 + (RANDOM + i * 97) % 30000))
		if command -v ss >/dev/null 2>&1; then
			# Captured, not piped into grep -q: with pipefail an early grep exit could read as "free".
			if [[ -n "$(ss -Htln "sport = :$p" 2>/dev/null)" ]]; then
				continue
			fi
		fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			continue
		fi
		echo "$p"
		return 0
	done
	die "no free port found"
}

log_tail() {
	local f="${1:-$log}"
	echo "---- last lines of $f ----" >&2
	tail -n 40 "$f" >&2 2>/dev/null || true
	echo "----" >&2
}

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
		log_tail "$base/install.log"
		die "mariadb-install-db failed"
	fi
}

cmd_start() {
	local pid
	pid="$(current_pid || true)"
	if alive "$pid"; then
		echo "mariadb-ctl: already running (pid $pid)"
		return 0
	fi
	[[ -d "$datadir" ]] || die "no datadir $datadir"
	# The port is chosen once and then kept, so DSNs handed out stay valid across a restart.
	[[ -s "$portfile" ]] || free_port >"$portfile"
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
		if ! alive "$launched" && ! alive "$(current_pid || true)"; then
			log_tail
			die "mariadbd exited during start-up"
		fi
		if ((i == 120)); then
			log_tail
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
	echo "mariadb-ctl: running on 127.0.0.1:$port (pid $(current_pid || echo "$launched"))"
}

cmd_stop() {
	local pid
	pid="$(current_pid || true)"
	if ! alive "$pid"; then
		echo "mariadb-ctl: not running"
		return 0
	fi
	# SIGTERM is mariadbd's clean shutdown; no credentials needed, unlike mariadb-admin shutdown.
	kill -TERM "$pid" 2>/dev/null || true
	local i
	for i in $(seq 1 240); do
		alive "$pid" || break
		sleep 0.25
	done
	if alive "$pid"; then
		echo "mariadb-ctl: pid $pid ignored SIGTERM for 60 s, killing" >&2
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.5
	fi
	rm -f "$pidfile"
	echo "mariadb-ctl: stopped (pid $pid)"
}

cmd_status() {
	local pid
	pid="$(current_pid || true)"
	if alive "$pid"; then
		echo "mariadb-ctl: running on 127.0.0.1:$(cat "$portfile") (pid $pid)"
	else
		echo "mariadb-ctl: not running"
		return 1
	fi
}

case "${1:-}" in
init) cmd_init ;;
start) cmd_start ;;
stop) cmd_stop ;;
restart)
	cmd_stop
	cmd_start
	;;
status) cmd_status ;;
*)
	echo "usage: $0 stop|start|restart|status|init" >&2
	exit 2
	;;
esac
