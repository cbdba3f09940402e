#!/usr/bin/env bash
# `make test`: the whole suite against real components. Installs what is missing,
# starts a throwaway MariaDB, runs every Go test (store suites on SQLite and
# MariaDB, e2e in headless Chromium), fuzzes each target for a bounded time, then
# runs `make check`. Every stage runs even after an earlier one fails, so one CI
# run reports all the problems; the exit status is non-zero if any stage failed.
# MariaDB is stopped on every exit path by the trap that start_mariadb installs.
#
# Knobs (environment):
#   GO_TEST_FLAGS  extra flags for go test, e.g. "-race" or "-run TestBooking -v"
#   FUZZTIME       time per fuzz target (default 10s); FUZZTIME=0 skips fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

# CI images put Go in /usr/local/go/bin without adding it to PATH.
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"

section() {
	printf '\n==== %s ====\n' "$*"
}

failed=()
# Runs one stage; remembers a failure instead of stopping at it.
stage() {
	local name="$1"
	shift
	section "$name"
	local start=$SECONDS
	if "$@"; then
		echo "---- $name: ok ($((SECONDS - start)) s)"
	else
		echo "---- $name: FAILED ($((SECONDS - start)) s)" >&2
		failed+=("$name")
	fi
}

# shellcheck source=scripts/testenv.sh
. scripts/testenv.sh

# Without these the later stages cannot mean anything, so failure here is fatal.
section "packages"
ensure_packages
section "mariadb"
start_mariadb
start_versitygw
start_mailpit
# Always: the cluster starts in about 10 s, so the multi-primary tests run in
# every `make test` rather than only when someone asks for them.
start_galera
start_redis
start_slapd
start_oidc
export_chrome
echo "CARDHOUR_TEST_MYSQL=$CARDHOUR_TEST_MYSQL"
echo "CARDHOUR_TEST_CHROME=$CARDHOUR_TEST_CHROME"
echo "CARDHOUR_TEST_SMTP_ADDR=$CARDHOUR_TEST_SMTP_ADDR"
echo "CARDHOUR_TEST_GALERA=${CARDHOUR_TEST_GALERA:-}"
echo "CARDHOUR_TEST_REDIS=$CARDHOUR_TEST_REDIS"
echo "CARDHOUR_TEST_OIDC_ISSUER=$CARDHOUR_TEST_OIDC_ISSUER"
echo "CARDHOUR_TEST_LDAP_URL=$CARDHOUR_TEST_LDAP_URL"

go_test() {
	if [[ -z "$(go list ./... 2>/dev/null)" ]]; then
		echo "no Go packages yet; nothing to test"
		return 0
	fi
	# -count=1: results must come from this run against this database, never the cache.
	# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags on purpose
	go test -count=1 ${GO_TEST_FLAGS:-} ./...
}
stage "go test" go_test
stage "fuzz" scripts/fuzz.sh
stage "check" make --no-print-directory check

section "summary"
if ((${#failed[@]} > 0)); then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "all stages passed"
