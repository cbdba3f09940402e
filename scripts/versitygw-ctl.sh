#!/usr/bin/env bash
# Controls the throwaway versitygw S3 server that scripts/testenv.sh starts for
# the object storage suite: versitygw's posix backend with --versioning-dir, so
# buckets can have versioning on or off like Tianyi OOS / ZOS.
#
#   versitygw-ctl.sh install   # build the pinned versitygw once into the cache
#   versitygw-ctl.sh start     # start it (CARDHOUR_TEST_VERSITYGW_DIR must be set)
#   versitygw-ctl.sh stop      # returns once it has exited
#   versitygw-ctl.sh status    # exit 0 when running
#
# The binary is built from the Go module proxy with `go install` (no prebuilt
# download) into ${CARDHOUR_TEST_CACHE:-~/.cache/cardhour}/versitygw-VERSION/,
# so only the first run on a machine pays for the build. The instance lives in
# CARDHOUR_TEST_VERSITYGW_DIR: root/ (buckets), versions/, port, pid, log.
set -euo pipefail

# Pinned: the contract suite was written against this release.
VERSITYGW_VERSION="v1.8.0"
VERSITYGW_MODULE="github.com/versity/versitygw/cmd/versitygw"

command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"

die() {
	echo "versitygw-ctl: $*" >&2
	exit 1
}

cache="${CARDHOUR_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cardhour}/versitygw-$VERSITYGW_VERSION"
bin="$cache/versitygw"

cmd_install() {
	if [[ -x "$bin" ]]; then
		return 0
	fi
	echo "versitygw-ctl: building versitygw $VERSITYGW_VERSION into $cache (first run on this machine)"
	mkdir -p "$cache"
	# Outside any module, so this project's go.mod neither constrains nor
	# records the gateway's dependencies.
	if ! (cd "$cache" && GOBIN="$cache" GOFLAGS=-buildvcs=false go install "$VERSITYGW_MODULE@$VERSITYGW_VERSION") >"$cache/build.log" 2>&1; then
		tail -n 30 "$cache/build.log" >&2
		die "go install $VERSITYGW_MODULE@$VERSITYGW_VERSION failed"
	fi
	[[ -x "$bin" ]] || die "go install left no binary at $bin"
}

[[ "${1:-}" == install ]] && {
	cmd_install
	exit 0
}

[[ -n "${CARDHOUR_TEST_VERSITYGW_DIR:-}" ]] || die "CARDHOUR_TEST_VERSITYGW_DIR is not set (run under scripts/testenv.sh)"
base="$CARDHOUR_TEST_VERSITYGW_DIR"
pidfile="$base/versitygw.pid"
portfile="$base/port"
log="$base/versitygw.log"
# Fixed test credentials: the server is bound to 127.0.0.1 and thrown away.
access="${CARDHOUR_TEST_S3_ACCESS_KEY:-cardhour-test}"
secret="${CARDHOUR_TEST_S3_SECRET_KEY:-cardhour-test-secret}"

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

cmd_start() {
	local pid
	pid="$(current_pid || true)"
	if alive "$pid"; then
		echo "versitygw-ctl: already running (pid $pid)"
		return 0
	fi
	cmd_install
	mkdir -p "$base/root" "$base/versions"
	[[ -s "$portfile" ]] || free_port >"$portfile"
	local port
	port="$(cat "$portfile")"
	# setsid: a Ctrl-C aimed at the tests must not kill it before the trap
	# stops it. All streams on the log, so no caller waits on its pipes.
	setsid "$bin" --access "$access" --secret "$secret" --port "127.0.0.1:$port" --quiet \
		posix --versioning-dir "$base/versions" "$base/root" </dev/null >>"$log" 2>&1 &
	local launched=$!
	echo "$launched" >"$pidfile"
	local i
	for i in $(seq 1 100); do
		# Any HTTP answer (403 without a signature) means it listens.
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "versitygw-ctl: running on 127.0.0.1:$port (pid $launched)"
			return 0
		fi
		if ! alive "$launched"; then
			tail -n 30 "$log" >&2 || true
			die "versitygw exited during start-up"
		fi
		sleep 0.2
	done
	kill -TERM "$launched" 2>/dev/null || true
	tail -n 30 "$log" >&2 || true
	die "versitygw did not listen on 127.0.0.1:$port within 20 s"
}

cmd_stop() {
	local pid
	pid="$(current_pid || true)"
	if ! alive "$pid"; then
		echo "versitygw-ctl: not running"
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
	echo "versitygw-ctl: stopped (pid $pid)"
}

cmd_status() {
	local pid
	pid="$(current_pid || true)"
	if alive "$pid"; then
		echo "versitygw-ctl: running on 127.0.0.1:$(cat "$portfile") (pid $pid)"
	else
		echo "versitygw-ctl: not running"
		return 1
	fi
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
*)
	echo "usage: $0 install|start|stop|status" >&2
	exit 2
	;;
esac
