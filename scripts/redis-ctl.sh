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

die() {
	echo "redis-ctl: $*" >&2
	exit 1
}

[[ -n "${CARDHOUR_TEST_REDIS_DIR:-}" ]] || die "CARDHOUR_TEST_REDIS_DIR is not set (run under scripts/testenv.sh)"
base="$CARDHOUR_TEST_REDIS_DIR"
pidfile="$base/redis.pid"
portfile="$base/port"
log="$base/redis.log"

server="$(command -v redis-server || true)"
[[ -n "$server" || ! -x /usr/bin/redis-server ]] || server=/usr/bin/redis-server

alive() {
	local pid="$1" state
	[[ -n "$pid" && -r "/proc/$pid/stat" ]] || return 1
	state="$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" || return 1
	[[ "$state" != Z && "$state" != X ]]
}

current_pid() {
	[[ -s "$pidfile" ]] && cat "$pidfile"
}

free_port() {
	local i p
	for i in $(seq 0 199); do
		p=$((20000 + (RANDOM + i * 89) % 30000))
		if command -v ss >/dev/null 2>&1 && [[ -n "$(ss -Htln "sport = :$p" 2>/dev/null)" ]]; then
			continue
		fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			continue
		fi
		echo "$p"
		return 0
	done
	die "no free port found"
}

listening() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

cmd_start() {
	local pid
	pid="$(current_pid || true)"
	if alive "$pid"; then
		echo "redis-ctl: already running (pid $pid)"
		return 0
	fi
	[[ -n "$server" ]] || die "redis-server not installed (scripts/testenv.sh ensure_packages installs it)"
	mkdir -p "$base"
	[[ -s "$portfile" ]] || free_port >"$portfile"
	local port
	port="$(cat "$portfile")"
	# setsid: a Ctrl-C aimed at the tests must not kill it before the trap stops it.
	setsid "$server" --bind 127.0.0.1 --port "$port" --save "" --appendonly no --dir "$base" \
		--daemonize no --protected-mode no --logfile "$log" </dev/null >>"$log" 2>&1 &
	local launched=$!
	echo "$launched" >"$pidfile"
	local i
	for i in $(seq 1 100); do
		if listening "$port"; then
			echo "redis-ctl: on 127.0.0.1:$port (pid $launched)"
			return 0
		fi
		if ! alive "$launched"; then
			tail -n 30 "$log" >&2 || true
			die "redis-server exited during start-up"
		fi
		sleep 0.1
	done
	kill -TERM "$launched" 2>/dev/null || true
	tail -n 30 "$log" >&2 || true
	die "redis-server did not listen on 127.0.0.1:$port within 10 s"
}

cmd_stop() {
	local pid
	pid="$(current_pid || true)"
	if ! alive "$pid"; then
		echo "redis-ctl: not running"
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	local i
	for i in $(seq 1 100); do
		alive "$pid" || break
		sleep 0.1
	done
	if alive "$pid"; then
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
	echo "redis-ctl: stopped (pid $pid)"
}

cmd_status() {
	local pid
	pid="$(current_pid || true)"
	if alive "$pid"; then
		echo "redis-ctl: on 127.0.0.1:$(cat "$portfile") (pid $pid)"
	else
		echo "redis-ctl: not running"
		return 1
	fi
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
