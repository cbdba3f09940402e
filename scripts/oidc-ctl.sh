#!/usr/bin/env bash
# Controls the throwaway OpenID Connect provider that scripts/testenv.sh
# starts for the company-login suites: e2e/oidcprovider, zitadel/oidc's OP
# with one confidential client (code flow, PKCE S256 required) and users read
# from a JSON file at every login.
#
#   oidc-ctl.sh install   # build e2e/oidcprovider once into the cache
#   oidc-ctl.sh start     # start it (CARDHOUR_TEST_OIDC_DIR must be set)
#   oidc-ctl.sh stop      # returns once it has exited
#   oidc-ctl.sh status    # exit 0 when running
#
# The binary is built from e2e/oidcprovider, a module of its own (zitadel and
# its dependencies come from the Go module proxy and stay out of cardhour's
# go.mod), into ${CARDHOUR_TEST_CACHE:-~/.cache/cardhour}/oidcprovider-HASH/,
# HASH being that of its go.mod, go.sum and sources: a change rebuilds, an
# unchanged tree builds once per machine.
#
# The instance lives in CARDHOUR_TEST_OIDC_DIR: port (kept across stop/start,
# so the issuer URL stays the same), client-id, client-secret, redirect (set
# at the first start from CARDHOUR_TEST_OIDC_CLIENT_ID / _CLIENT_SECRET /
# _REDIRECT or the defaults, then kept), users.json, pid, log.
#
# users.json is written at the first start when absent; a test may rewrite it
# (the provider reads it at every login). Users, groups and passwords:
#   alice  alice-pass  groups gpu-train, gpu-leads
#   bob    bob-pass    groups gpu-train
#   carol  carol-pass  groups gpu-viewers
# The default redirect is the glob http://127.0.0.1:*/login/oidc/callback: the
# portal under test listens on a random port.
#
# Login page: GET /login/username?authRequestID=ID shows a form that POSTs to
# /login/username with the fields id (hidden), username and password (inputs
# with the ids username and password) and a submit button.
set -euo pipefail

command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"

ctl_prefix=oidc-ctl
# shellcheck source=scripts/ctl-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../e2e/oidcprovider" && pwd)"
hash="$(cd "$src" && cat go.mod go.sum $(ls ./*.go | sort) | sha256sum | cut -c1-16)"
cache="$(ctl_cache "oidcprovider-$hash")"
bin="$cache/oidcprovider"

cmd_install() {
	if [[ -x "$bin" ]]; then
		return 0
	fi
	ctl_say "building e2e/oidcprovider into $cache (first run for this source)"
	mkdir -p "$cache"
	# GOWORK=off: a developer's go.work must not pull cardhour's module in.
	if ! (cd "$src" && GOWORK=off GOFLAGS=-buildvcs=false go build -o "$bin.tmp" .) >"$cache/build.log" 2>&1; then
		tail -n 30 "$cache/build.log" >&2
		die "go build of e2e/oidcprovider failed"
	fi
	mv "$bin.tmp" "$bin"
}

[[ "${1:-}" == install ]] && {
	cmd_install
	exit 0
}

base="$(ctl_need_dir CARDHOUR_TEST_OIDC_DIR)"
pidfile="$base/oidcprovider.pid"
portfile="$base/port"
log="$base/oidcprovider.log"
users="$base/users.json"

# setting FILE VALUE: the value kept from the first start, else VALUE (kept now).
setting() {
	[[ -s "$base/$1" ]] || printf '%s\n' "$2" >"$base/$1"
	cat "$base/$1"
}

write_users() {
	cat >"$users" <<-'JSON'
		[
		  {"username": "alice", "password": "alice-pass", "email": "alice@example.com", "name": "Alice Liddell", "groups": ["gpu-train", "gpu-leads"]},
		  {"username": "bob", "password": "bob-pass", "email": "bob@example.com", "name": "Bob Builder", "groups": ["gpu-train"]},
		  {"username": "carol", "password": "carol-pass", "email": "carol@example.com", "name": "Carol Danvers", "groups": ["gpu-viewers"]}
		]
	JSON
}

cmd_start() {
	! ctl_already_running "$pidfile" || return 0
	cmd_install
	mkdir -p "$base"
	[[ -s "$portfile" ]] || ctl_free_port >"$portfile"
	[[ -s "$users" ]] || write_users
	local port id secret redirect
	port="$(cat "$portfile")"
	id="$(setting client-id "${CARDHOUR_TEST_OIDC_CLIENT_ID:-cardhour-test}")"
	secret="$(setting client-secret "${CARDHOUR_TEST_OIDC_CLIENT_SECRET:-cardhour-oidc-$RANDOM$RANDOM$RANDOM}")"
	redirect="$(setting redirect "${CARDHOUR_TEST_OIDC_REDIRECT:-http://127.0.0.1:*/login/oidc/callback}")"
	chmod 600 "$base/client-secret"
	ctl_launch "$pidfile" "$log" "$bin" -addr "127.0.0.1:$port" -issuer "http://127.0.0.1:$port" \
		-client-id "$id" -client-secret "$secret" -redirect "$redirect" -users "$users"
	ctl_wait_started oidcprovider "$ctl_launched" "$log" 20 "$port"
	ctl_say "issuer http://127.0.0.1:$port, client $id (pid $ctl_launched)"
}

describe() {
	echo "issuer http://127.0.0.1:$(cat "$portfile")"
}

ctl_main "$pidfile" "install|start|stop|status" "${1:-}"
