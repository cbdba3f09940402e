#!/usr/bin/env bash
# Test environment for cardhour: the packages the suites need and a throwaway
# MariaDB 10.11. Nothing may depend on something installed by hand, so this
# installs what is missing and starts what the tests talk to.
#
# Sourced (by scripts/test.sh):
#   . scripts/testenv.sh
#   ensure_packages      # apt-get only what is absent
#   start_mariadb        # exports CARDHOUR_TEST_* and installs an EXIT trap that stops it
#   start_versitygw      # builds (once) and starts versitygw; the same trap stops it
#   start_mailpit        # builds (once) and starts mailpit (SMTP); the same trap stops it
#   start_galera         # a three-node MariaDB Galera cluster; the same trap stops it
#   start_redis          # starts a throwaway redis-server; the same trap stops it
#   start_oidc           # builds (once) and starts an OpenID Connect provider; the same trap stops it
#   start_slapd          # starts a throwaway OpenLDAP slapd loaded with e2e/testdata/directory.ldif
#   export_chrome
# (Meant for scripts: the traps would end an interactive shell that sources it.
# For a shell with the environment set, run `scripts/testenv.sh bash`.)
#
# Executed, to get the same environment around any command:
#   scripts/testenv.sh go test -count=1 ./store/...
#   scripts/testenv.sh bash            # an interactive shell with the env set
#
# Exported:
#   CARDHOUR_TEST_MYSQL        cardhour:cardhour@tcp(127.0.0.1:PORT)/   (no database; tests append
#                              NAME?charset=utf8mb4&parseTime=true&loc=UTC)
#   CARDHOUR_TEST_MARIADB_DIR  the datadir (its parent holds socket, pid file, log, port)
#   CARDHOUR_TEST_MARIADB_PID  pid of the first mariadbd (a restart changes it; the
#                              pid file in the parent of the datadir is the truth)
#   CARDHOUR_TEST_MARIADB_PORT the TCP port (kept across stop/start)
#   CARDHOUR_TEST_MARIADB_CTL  absolute path of scripts/mariadb-ctl.sh (stop|start|status)
#   CARDHOUR_TEST_CHROME       path of the chromium binary
#   CARDHOUR_TEST_S3_ENDPOINT  http://127.0.0.1:PORT of a throwaway versitygw S3 server
#                              (posix backend with --versioning-dir; start_versitygw)
#   CARDHOUR_TEST_S3_ACCESS_KEY, CARDHOUR_TEST_S3_SECRET_KEY  its credentials
#   CARDHOUR_TEST_VERSITYGW_DIR   its directory (buckets, versions, port, pid, log)
#   CARDHOUR_TEST_VERSITYGW_CTL   absolute path of scripts/versitygw-ctl.sh (stop|start|status)
#   CARDHOUR_TEST_SMTP_ADDR    127.0.0.1:PORT of a throwaway mailpit SMTP server (no TLS; AUTH
#                              accepted with any credentials; start_mailpit)
#   CARDHOUR_TEST_MAILPIT_URL  http://127.0.0.1:PORT of its HTTP API (what arrived)
#   CARDHOUR_TEST_MAILPIT_DIR  its directory (ports, pid, log, temporary database)
#   CARDHOUR_TEST_MAILPIT_CTL  absolute path of scripts/mailpit-ctl.sh (stop|start|status)
#   CARDHOUR_TEST_GALERA       three DSN bases, comma-separated, one per node of a throwaway
#                              Galera cluster, each in CARDHOUR_TEST_MYSQL's form
#                              (cardhour:cardhour@tcp(127.0.0.1:PORT)/; start_galera)
#   CARDHOUR_TEST_GALERA_DIR   its directory (node1..node3: datadir, socket, ports, log)
#   CARDHOUR_TEST_GALERA_CTL   absolute path of scripts/galera-ctl.sh (stop|start|status)
#   CARDHOUR_TEST_NO_GALERA=1  (input) skip start_galera; the Galera tests then skip
#   CARDHOUR_TEST_REDIS        redis://127.0.0.1:PORT/0 of a throwaway redis-server (no
#                              persistence; start_redis)
#   CARDHOUR_TEST_REDIS_DIR    its directory (port, pid, log)
#   CARDHOUR_TEST_OIDC_ISSUER  http://127.0.0.1:PORT, issuer of a throwaway OpenID Connect provider
#                              (e2e/oidcprovider, zitadel/oidc's OP; code flow, PKCE S256 required;
#                              start_oidc)
#   CARDHOUR_TEST_OIDC_CLIENT_ID, CARDHOUR_TEST_OIDC_CLIENT_SECRET  its one confidential client
#   CARDHOUR_TEST_OIDC_REDIRECT  the redirect URIs that client accepts: the glob
#                              http://127.0.0.1:*/login/oidc/callback (any port)
#   CARDHOUR_TEST_OIDC_USERS   its users file (JSON: username, password, email, name, groups[]),
#                              read at every login, so a test may rewrite it; starts with alice
#                              (alice-pass; gpu-train, gpu-leads), bob (bob-pass; gpu-train),
#                              carol (carol-pass; gpu-viewers)
#   CARDHOUR_TEST_OIDC_DIR     its directory (port, client settings, users.json, pid, log)
#   CARDHOUR_TEST_OIDC_CTL     absolute path of scripts/oidc-ctl.sh (stop|start|status)
#   CARDHOUR_TEST_REDIS_CTL    absolute path of scripts/redis-ctl.sh (stop|start|status)
#   CARDHOUR_TEST_LDAP_URL     ldap://127.0.0.1:PORT of a throwaway slapd (StartTLS offered, not
#                              required; start_slapd), suffix dc=cardhour,dc=test, loaded with
#                              e2e/testdata/directory.ldif (users alice, bob, carol; groups
#                              gpu-train, gpu-leads, gpu-viewers; passwords in its header)
#   CARDHOUR_TEST_LDAPS_URL    ldaps://127.0.0.1:PORT of the same server
#   CARDHOUR_TEST_LDAP_CA      PEM of the test CA that signed its certificate (IP:127.0.0.1, DNS:localhost)
#   CARDHOUR_TEST_LDAP_BASE    dc=cardhour,dc=test
#   CARDHOUR_TEST_LDAP_BIND_DN, CARDHOUR_TEST_LDAP_BIND_PASSWORD    the read-only service account
#   CARDHOUR_TEST_LDAP_ADMIN_DN, CARDHOUR_TEST_LDAP_ADMIN_PASSWORD  the rootdn, to change entries in tests
#   CARDHOUR_TEST_SLAPD_DIR    its directory (cn=config, database, certificates, ports, pid, log)
#   CARDHOUR_TEST_LDAP_CTL     absolute path of scripts/slapd-ctl.sh (stop|start|status)

# Only tighten the shell options when executed: a sourcing shell keeps its own.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	set -euo pipefail
fi

_testenv_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
_testenv_tmp=""
_testenv_vgw=""
_testenv_mailpit=""
_testenv_galera=""
_testenv_redis=""
_testenv_slapd=""
_testenv_oidc=""

# One EXIT trap stops everything started, whichever start ran first.
_testenv_cleanup() {
	stop_oidc
	stop_slapd
	stop_redis
	stop_galera
	stop_mailpit
	stop_versitygw
	stop_mariadb
}

# The tests run as root in CI; a developer without root still gets apt through sudo.
_testenv_as_root() {
	if [[ "$(id -u)" == 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		echo "testenv: need root (or sudo) to run: $*" >&2
		return 1
	fi
}

# Another apt/dpkg run (an image build, unattended upgrades) may hold the lock;
# apt-get's own lock timeout waits for it instead of failing at once.
_testenv_apt() {
	_testenv_as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get -o DPkg::Lock::Timeout=600 "$@"
}

ensure_packages() {
	local missing=()
	if ! command -v mariadbd >/dev/null 2>&1 && [[ ! -x /usr/sbin/mariadbd ]]; then
		missing+=(mariadb-server)
	fi
	# The Galera cluster: the provider library, and rsync for its state transfers.
	if [[ ! -e /usr/lib/galera/libgalera_smm.so ]]; then
		missing+=(galera-4)
	fi
	if ! command -v rsync >/dev/null 2>&1; then
		missing+=(rsync)
	fi
	if ! command -v chromium >/dev/null 2>&1; then
		missing+=(chromium)
	fi
	# Without CJK fonts the zh-CN screenshots are tofu boxes.
	if ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then
		missing+=(fonts-noto-cjk)
	fi
	if ! command -v redis-server >/dev/null 2>&1 && [[ ! -x /usr/bin/redis-server ]]; then
		missing+=(redis-server)
	fi
	# OpenLDAP for the company-login suites: slapd, and ldap-utils' ldapadd to load it.
	if ! command -v slapd >/dev/null 2>&1 && [[ ! -x /usr/sbin/slapd ]]; then
		missing+=(slapd)
	fi
	if ! command -v ldapadd >/dev/null 2>&1; then
		missing+=(ldap-utils)
	fi
	if ((${#missing[@]} == 0)); then
		echo "testenv: packages present"
		return 0
	fi
	echo "testenv: installing ${missing[*]}"
	# Update only when installing: a fresh image has no package lists.
	_testenv_apt update -qq
	_testenv_apt install -y -qq "${missing[@]}"
}

# mariadbd lives in /usr/sbin, which a non-root PATH may lack.
_testenv_path_sbin() {
	case ":$PATH:" in
	*:/usr/sbin:*) ;;
	*) PATH="$PATH:/usr/sbin" ;;
	esac
}

# _testenv_instance VAR NAME: a fresh directory for service NAME, kept in
# VAR, and the traps that stop everything, installed before anything can fail
# so that a half-started service is still stopped.
_testenv_instance() {
	local dir
	dir="$(mktemp -d "${TMPDIR:-/tmp}/cardhour-$2.XXXXXX")"
	printf -v "$1" '%s' "$dir"
	trap _testenv_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# _testenv_start CTL WHAT PORTFILE...: CTL start, three tries; another
# process may take a port between picking and binding, so each retry removes
# the PORTFILEs and the ctl picks again.
_testenv_start() {
	local ctl="$1" what="$2" try ports="other ports"
	shift 2
	(($# > 1)) || ports="another port"
	for try in 1 2 3; do
		if "$ctl" start; then
			return 0
		fi
		((try < 3)) || return 1
		echo "testenv: $what did not start, picking $ports" >&2
		rm -f "$@"
	done
}

# _testenv_stop VAR CTL DIRVAR WHAT [SUBDIR]: stops the service whose
# directory VAR holds, with DIRVAR (the ctl's instance variable) set to that
# directory plus SUBDIR, removes the directory and empties VAR. Idempotent:
# the EXIT trap calls it even if a test already stopped the service, and
# does nothing for a service never started.
_testenv_stop() {
	local dir="${!1}"
	[[ -n "$dir" && -d "$dir" ]] || return 0
	env "$3=$dir${5:-}" "$_testenv_dir/$2" stop || true
	rm -rf "$dir"
	printf -v "$1" '%s' ""
	echo "testenv: $4 stopped, $dir removed"
}

start_mariadb() {
	_testenv_path_sbin
	local ctl="$_testenv_dir/mariadb-ctl.sh"
	_testenv_instance _testenv_tmp mariadb

	export CARDHOUR_TEST_MARIADB_DIR="$_testenv_tmp/data"
	export CARDHOUR_TEST_MARIADB_CTL="$ctl"
	"$ctl" init

	# Another process may take the port between picking and binding; try a few.
	local try logsize
	for try in 1 2 3 4 5; do
		logsize="$(stat -c %s "$_testenv_tmp/mariadbd.log" 2>/dev/null || echo 0)"
		if "$ctl" start; then
			break
		fi
		# Only this attempt's part of the log says whether the port was the problem.
		if ((try == 5)) || [[ "$(tail -c +"$((logsize + 1))" "$_testenv_tmp/mariadbd.log" 2>/dev/null)" != *"Bind on"* ]]; then
			echo "testenv: MariaDB did not start" >&2
			return 1
		fi
		echo "testenv: port taken, picking another" >&2
		rm -f "$_testenv_tmp/port"
	done

	local port
	port="$(cat "$_testenv_tmp/port")"
	# Real grants, no --skip-grant-tables: the portal must work with a normal account.
	# Both hosts: TCP from 127.0.0.1 (what the DSN uses) and the socket (localhost).
	mariadb --no-defaults --protocol=socket --socket="$_testenv_tmp/mysqld.sock" -uroot <<-'SQL'
		CREATE USER 'cardhour'@'127.0.0.1' IDENTIFIED BY 'cardhour';
		CREATE USER 'cardhour'@'localhost' IDENTIFIED BY 'cardhour';
		GRANT ALL PRIVILEGES ON *.* TO 'cardhour'@'127.0.0.1' WITH GRANT OPTION;
		GRANT ALL PRIVILEGES ON *.* TO 'cardhour'@'localhost' WITH GRANT OPTION;
		FLUSH PRIVILEGES;
	SQL

	export CARDHOUR_TEST_MARIADB_PORT="$port"
	export CARDHOUR_TEST_MARIADB_PID
	CARDHOUR_TEST_MARIADB_PID="$(cat "$_testenv_tmp/mariadbd.pid")"
	export CARDHOUR_TEST_MYSQL="cardhour:cardhour@tcp(127.0.0.1:${port})/"
	echo "testenv: MariaDB $(mariadbd --version | awk '{print $3}') on 127.0.0.1:$port (pid $CARDHOUR_TEST_MARIADB_PID, dir $_testenv_tmp)"
}

# Idempotent (see _testenv_stop).
stop_mariadb() {
	_testenv_stop _testenv_tmp mariadb-ctl.sh CARDHOUR_TEST_MARIADB_DIR MariaDB /data
}

# versitygw: a real S3 server for the object storage suite, built from the Go
# module proxy on the first run (see scripts/versitygw-ctl.sh).
start_versitygw() {
	local ctl="$_testenv_dir/versitygw-ctl.sh"
	"$ctl" install
	_testenv_instance _testenv_vgw versitygw
	export CARDHOUR_TEST_VERSITYGW_DIR="$_testenv_vgw"
	export CARDHOUR_TEST_VERSITYGW_CTL="$ctl"
	export CARDHOUR_TEST_S3_ACCESS_KEY="cardhour-test"
	export CARDHOUR_TEST_S3_SECRET_KEY="cardhour-test-secret-$RANDOM$RANDOM"
	_testenv_start "$ctl" versitygw "$_testenv_vgw/port" || return 1
	local port
	port="$(cat "$_testenv_vgw/port")"
	export CARDHOUR_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
	echo "testenv: versitygw on $CARDHOUR_TEST_S3_ENDPOINT (dir $_testenv_vgw)"
}

stop_versitygw() {
	_testenv_stop _testenv_vgw versitygw-ctl.sh CARDHOUR_TEST_VERSITYGW_DIR versitygw
}

# mailpit: a real SMTP server for the mail suite, built from the Go module
# proxy on the first run (see scripts/mailpit-ctl.sh).
start_mailpit() {
	local ctl="$_testenv_dir/mailpit-ctl.sh"
	"$ctl" install
	_testenv_instance _testenv_mailpit mailpit
	export CARDHOUR_TEST_MAILPIT_DIR="$_testenv_mailpit"
	export CARDHOUR_TEST_MAILPIT_CTL="$ctl"
	_testenv_start "$ctl" mailpit "$_testenv_mailpit/smtp-port" "$_testenv_mailpit/http-port" || return 1
	export CARDHOUR_TEST_SMTP_ADDR="127.0.0.1:$(cat "$_testenv_mailpit/smtp-port")"
	export CARDHOUR_TEST_MAILPIT_URL="http://127.0.0.1:$(cat "$_testenv_mailpit/http-port")"
	echo "testenv: mailpit SMTP on $CARDHOUR_TEST_SMTP_ADDR, API on $CARDHOUR_TEST_MAILPIT_URL (dir $_testenv_mailpit)"
}

stop_mailpit() {
	_testenv_stop _testenv_mailpit mailpit-ctl.sh CARDHOUR_TEST_MAILPIT_DIR mailpit
}

# A three-node Galera cluster (scripts/galera-ctl.sh) for the multi-primary
# tests; about 10 s to start. CARDHOUR_TEST_NO_GALERA=1 leaves it out, and
# the tests that need it skip.
start_galera() {
	if [[ -n "${CARDHOUR_TEST_NO_GALERA:-}" ]]; then
		echo "testenv: Galera left out (CARDHOUR_TEST_NO_GALERA)"
		return 0
	fi
	_testenv_path_sbin
	local ctl="$_testenv_dir/galera-ctl.sh"
	_testenv_instance _testenv_galera galera
	# The nodes run as mysql under root (rsync SST refuses root): the
	# directory, 0700 from mktemp, must be theirs.
	if [[ "$(id -u)" == 0 ]]; then
		chown mysql: "$_testenv_galera"
	fi
	export CARDHOUR_TEST_GALERA_DIR="$_testenv_galera"
	export CARDHOUR_TEST_GALERA_CTL="$ctl"
	"$ctl" init
	local try
	for try in 1 2 3; do
		if "$ctl" start; then
			break
		fi
		((try < 3)) || return 1
		echo "testenv: Galera did not start, picking other ports" >&2
		"$ctl" stop || true
		rm -f "$_testenv_galera"/node*/ports
	done
	# Account statements replicate: created on node 1, the user is on all three.
	"$ctl" sql 1 "CREATE USER 'cardhour'@'127.0.0.1' IDENTIFIED BY 'cardhour';
		GRANT ALL PRIVILEGES ON *.* TO 'cardhour'@'127.0.0.1' WITH GRANT OPTION;"
	local dsns=() port
	for port in $("$ctl" ports); do
		dsns+=("cardhour:cardhour@tcp(127.0.0.1:${port})/")
	done
	local IFS=,
	export CARDHOUR_TEST_GALERA="${dsns[*]}"
	echo "testenv: Galera cluster $CARDHOUR_TEST_GALERA (dir $_testenv_galera)"
}

stop_galera() {
	_testenv_stop _testenv_galera galera-ctl.sh CARDHOUR_TEST_GALERA_DIR Galera
}

# redis-server: the replicas' shared live state (cluster/), Debian's package
# (see scripts/redis-ctl.sh).
start_redis() {
	local ctl="$_testenv_dir/redis-ctl.sh"
	_testenv_instance _testenv_redis redis
	export CARDHOUR_TEST_REDIS_DIR="$_testenv_redis"
	export CARDHOUR_TEST_REDIS_CTL="$ctl"
	_testenv_start "$ctl" redis-server "$_testenv_redis/port" || return 1
	export CARDHOUR_TEST_REDIS="redis://127.0.0.1:$(cat "$_testenv_redis/port")/0"
	echo "testenv: redis-server on $CARDHOUR_TEST_REDIS (dir $_testenv_redis)"
}

stop_redis() {
	_testenv_stop _testenv_redis redis-ctl.sh CARDHOUR_TEST_REDIS_DIR redis-server
}

# slapd: the company directory of the LDAP suites, Debian's package run from
# its own cn=config in a temporary directory (see scripts/slapd-ctl.sh); the
# packaged service is never started or used.
start_slapd() {
	_testenv_path_sbin
	local ctl="$_testenv_dir/slapd-ctl.sh"
	_testenv_instance _testenv_slapd slapd
	export CARDHOUR_TEST_SLAPD_DIR="$_testenv_slapd"
	export CARDHOUR_TEST_LDAP_CTL="$ctl"
	"$ctl" init
	_testenv_start "$ctl" slapd "$_testenv_slapd/ldap-port" "$_testenv_slapd/ldaps-port" || return 1
	export CARDHOUR_TEST_LDAP_URL="ldap://127.0.0.1:$(cat "$_testenv_slapd/ldap-port")"
	export CARDHOUR_TEST_LDAPS_URL="ldaps://127.0.0.1:$(cat "$_testenv_slapd/ldaps-port")"
	export CARDHOUR_TEST_LDAP_CA="$_testenv_slapd/ca.pem"
	export CARDHOUR_TEST_LDAP_BASE="dc=cardhour,dc=test"
	# The service account's password is in e2e/testdata/directory.ldif's header.
	export CARDHOUR_TEST_LDAP_BIND_DN="cn=cardhour-svc,dc=cardhour,dc=test"
	export CARDHOUR_TEST_LDAP_BIND_PASSWORD="svc-pw-readonly"
	export CARDHOUR_TEST_LDAP_ADMIN_DN="cn=admin,dc=cardhour,dc=test"
	export CARDHOUR_TEST_LDAP_ADMIN_PASSWORD
	CARDHOUR_TEST_LDAP_ADMIN_PASSWORD="$(cat "$_testenv_slapd/admin-password")"
	echo "testenv: slapd on $CARDHOUR_TEST_LDAP_URL and $CARDHOUR_TEST_LDAPS_URL (dir $_testenv_slapd)"
}

stop_slapd() {
	_testenv_stop _testenv_slapd slapd-ctl.sh CARDHOUR_TEST_SLAPD_DIR slapd
}

# An OpenID Connect provider for the company-login suites, built from
# e2e/oidcprovider on the first run (see scripts/oidc-ctl.sh).
start_oidc() {
	local ctl="$_testenv_dir/oidc-ctl.sh"
	"$ctl" install
	_testenv_instance _testenv_oidc oidc
	export CARDHOUR_TEST_OIDC_DIR="$_testenv_oidc"
	export CARDHOUR_TEST_OIDC_CTL="$ctl"
	export CARDHOUR_TEST_OIDC_CLIENT_ID="cardhour-test"
	export CARDHOUR_TEST_OIDC_CLIENT_SECRET="cardhour-oidc-secret-$RANDOM$RANDOM"
	export CARDHOUR_TEST_OIDC_REDIRECT="http://127.0.0.1:*/login/oidc/callback"
	_testenv_start "$ctl" "the OIDC provider" "$_testenv_oidc/port" || return 1
	export CARDHOUR_TEST_OIDC_ISSUER="http://127.0.0.1:$(cat "$_testenv_oidc/port")"
	export CARDHOUR_TEST_OIDC_USERS="$_testenv_oidc/users.json"
	echo "testenv: OIDC provider $CARDHOUR_TEST_OIDC_ISSUER (dir $_testenv_oidc)"
}

stop_oidc() {
	_testenv_stop _testenv_oidc oidc-ctl.sh CARDHOUR_TEST_OIDC_DIR "OIDC provider"
}

export_chrome() {
	local chrome
	chrome="$(command -v chromium || true)"
	if [[ -z "$chrome" ]]; then
		echo "testenv: chromium not found" >&2
		return 1
	fi
	export CARDHOUR_TEST_CHROME="$chrome"
}

# Executed rather than sourced: set everything up, run the command, tear down.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	if (($# == 0)); then
		echo "usage: $0 COMMAND [ARG...]   (or source it and call ensure_packages, start_mariadb, start_versitygw, start_mailpit, start_galera, start_redis, start_slapd, start_oidc, export_chrome)" >&2
		exit 2
	fi
	ensure_packages
	start_mariadb
	start_versitygw
	start_mailpit
	start_galera
	start_redis
	start_oidc
	start_slapd
	export_chrome
	# Not exec: the EXIT trap must outlive the command to stop MariaDB.
	"$@"
fi
