#!/usr/bin/env bash
# Controls the throwaway mailpit SMTP server that scripts/testenv.sh starts for
# the mail suite: a real SMTP server (AUTH accepted with any credentials, so
# the AUTH path runs) whose HTTP API shows what arrived.
#
#   mailpit-ctl.sh install   # build the pinned mailpit once into the cache
#   mailpit-ctl.sh start     # start it (CARDHOUR_TEST_MAILPIT_DIR must be set)
#   mailpit-ctl.sh stop      # returns once it has exited
#   mailpit-ctl.sh status    # exit 0 when running
#
# The binary is built from the Go module proxy with `go install` (no prebuilt
# download) into ${CARDHOUR_TEST_CACHE:-~/.cache/cardhour}/mailpit-VERSION/,
# so only the first run on a machine pays for the build. The instance lives in
# CARDHOUR_TEST_MAILPIT_DIR: smtp-port, http-port, pid, log, and mailpit's
# temporary database (no --database: mailpit makes one in TMPDIR, which is
# pointed at the directory, and deletes it on exit).
set -euo pipefail

# Pinned: the mail suite and notifytest's API client were written against this release.
MAILPIT_VERSION="v1.33.1"
MAILPIT_MODULE="github.com/axllent/mailpit"

command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"

die() {
	echo "mailpit-ctl: $*" >&2
	exit 1
}

cache="${CARDHOUR_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cardhour}/mailpit-$MAILPIT_VERSION"
bin="$cache/mailpit"

cmd_install() {
	if [[ -x "$bin" ]]; then
		return 0
	fi
	echo "mailpit-ctl: building mailpit $MAILPIT_VERSION into $cache (first run on this machine)"
	mkdir -p "$cache"
	# Outside any module, so this project's go.mod neither constrains nor
	# records mailpit's dependencies.
	if ! (cd "$cache" && GOBIN="$cache" GOFLAGS=-buildvcs=false go install "$MAILPIT_MODULE@$MAILPIT_VERSION") >"$cache/build.log" 2>&1; then
		tail -n 30 "$cache/build.log" >&2
		die "go install $MAILPIT_MODULE@$MAILPIT_VERSION failed"
	fi
	[[ -x "$bin" ]] || die "go install left no binary at $bin"
}

[[ "${1:-}" == install ]] && {
	cmd_install
	exit 0
}

[[ -n "${CARDHOUR_TEST_MAILPIT_DIR:-}" ]] || die "CARDHOUR_TEST_MAILPIT_DIR is not set (run under scripts/testenv.sh)"
base="$CARDHOUR_TEST_MAILPIT_DIR"
pidfile="$base/mailpit.pid"
smtpfile="$base/smtp-port"
httpfile="$base/http-port"
log="$base/mailpit.log"

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
		if [[ "$p" == "${1:-}" ]]; then
			continue
		fi
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
		echo "mailpit-ctl: already running (pid $pid)"
		return 0
	fi
	cmd_install
	mkdir -p "$base"
	[[ -s "$smtpfile" ]] || free_port >"$smtpfile"
	[[ -s "$httpfile" ]] || free_port "$(cat "$smtpfile")" >"$httpfile"
	local smtp http
	smtp="$(cat "$smtpfile")"
	http="$(cat "$httpfile")"
	# setsid: a Ctrl-C aimed at the tests must not kill it before the trap
	# stops it. All streams on the log, so no caller waits on its pipes.
	# --smtp-auth-accept-any + --smtp-auth-allow-insecure: AUTH PLAIN without
	# TLS, so the sender's AUTH path runs against a real server.
	TMPDIR="$base" setsid "$bin" --smtp "127.0.0.1:$smtp" --listen "127.0.0.1:$http" \
		--smtp-auth-accept-any --smtp-auth-allow-insecure --smtp-disable-rdns \
		--disable-version-check --quiet </dev/null >>"$log" 2>&1 &
	local launched=$!
	echo "$launched" >"$pidfile"
	local i
	for i in $(seq 1 100); do
		if listening "$smtp" && listening "$http"; then
			echo "mailpit-ctl: SMTP on 127.0.0.1:$smtp, HTTP on 127.0.0.1:$http (pid $launched)"
			return 0
		fi
		if ! alive "$launched"; then
			tail -n 30 "$log" >&2 || true
			die "mailpit exited during start-up"
		fi
		sleep 0.2
	done
	kill -TERM "$launched" 2>/dev/null || true
	tail -n 30 "$log" >&2 || true
	die "mailpit did not listen on 127.0.0.1:$smtp and :$http within 20 s"
}

cmd_stop() {
	local pid
	pid="$(current_pid || true)"
	if ! alive "$pid"; then
		echo "mailpit-ctl: not running"
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
	echo "mailpit-ctl: stopped (pid $pid)"
}

cmd_status() {
	local pid
	pid="$(current_pid || true)"
	if alive "$pid"; then
		echo "mailpit-ctl: SMTP on 127.0.0.1:$(cat "$smtpfile"), HTTP on 127.0.0.1:$(cat "$httpfile") (pid $pid)"
	else
		echo "mailpit-ctl: not running"
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
