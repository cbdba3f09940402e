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

ctl_prefix=mailpit-ctl
# shellcheck source=scripts/ctl-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"

bin="$(ctl_cache "mailpit-$MAILPIT_VERSION")/mailpit"

cmd_install() {
	ctl_go_install "$bin" "$MAILPIT_MODULE" "$MAILPIT_VERSION"
}

[[ "${1:-}" == install ]] && {
	cmd_install
	exit 0
}

base="$(ctl_need_dir CARDHOUR_TEST_MAILPIT_DIR)"
pidfile="$base/mailpit.pid"
smtpfile="$base/smtp-port"
httpfile="$base/http-port"
log="$base/mailpit.log"

cmd_start() {
	! ctl_already_running "$pidfile" || return 0
	cmd_install
	mkdir -p "$base"
	[[ -s "$smtpfile" ]] || ctl_free_port >"$smtpfile"
	[[ -s "$httpfile" ]] || ctl_free_port "$(cat "$smtpfile")" >"$httpfile"
	local smtp http
	smtp="$(cat "$smtpfile")"
	http="$(cat "$httpfile")"
	# --smtp-auth-accept-any + --smtp-auth-allow-insecure: AUTH PLAIN without
	# TLS, so the sender's AUTH path runs against a real server.
	ctl_launch "$pidfile" "$log" env TMPDIR="$base" "$bin" --smtp "127.0.0.1:$smtp" --listen "127.0.0.1:$http" \
		--smtp-auth-accept-any --smtp-auth-allow-insecure --smtp-disable-rdns \
		--disable-version-check --quiet
	ctl_wait_started mailpit "$ctl_launched" "$log" 20 "$smtp" "$http"
	ctl_say "SMTP on 127.0.0.1:$smtp, HTTP on 127.0.0.1:$http (pid $ctl_launched)"
}

describe() {
	echo "SMTP on 127.0.0.1:$(cat "$smtpfile"), HTTP on 127.0.0.1:$(cat "$httpfile")"
}

ctl_main "$pidfile" "install|start|stop|status" "${1:-}"
