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

ctl_prefix=versitygw-ctl
# shellcheck source=scripts/ctl-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"

bin="$(ctl_cache "versitygw-$VERSITYGW_VERSION")/versitygw"

cmd_install() {
	ctl_go_install "$bin" "$VERSITYGW_MODULE" "$VERSITYGW_VERSION"
}

[[ "${1:-}" == install ]] && {
	cmd_install
	exit 0
}

base="$(ctl_need_dir CARDHOUR_TEST_VERSITYGW_DIR)"
pidfile="$base/versitygw.pid"
portfile="$base/port"
log="$base/versitygw.log"
# Fixed test credentials: the server is bound to 127.0.0.1 and thrown away.
access="${CARDHOUR_TEST_S3_ACCESS_KEY:-cardhour-test}"
secret="${CARDHOUR_TEST_S3_SECRET_KEY:-cardhour-test-secret}"

cmd_start() {
	! ctl_already_running "$pidfile" || return 0
	cmd_install
	mkdir -p "$base/root" "$base/versions"
	[[ -s "$portfile" ]] || ctl_free_port >"$portfile"
	local port
	port="$(cat "$portfile")"
	ctl_launch "$pidfile" "$log" "$bin" --access "$access" --secret "$secret" --port "127.0.0.1:$port" --quiet \
		posix --versioning-dir "$base/versions" "$base/root"
	# Any HTTP answer (403 without a signature) means it listens.
	ctl_wait_started versitygw "$ctl_launched" "$log" 20 "$port"
	ctl_say "running on 127.0.0.1:$port (pid $ctl_launched)"
}

describe() {
	echo "running on 127.0.0.1:$(cat "$portfile")"
}

ctl_main "$pidfile" "install|start|stop|status" "${1:-}"
