#!/usr/bin/env bash
# Controls the throwaway OpenLDAP slapd that scripts/testenv.sh starts for the
# company-login suites (directory/ldap, e2e): Debian's slapd with its own
# cn=config in a temporary directory (never the packaged service nor
# /etc/ldap), listening on 127.0.0.1 only, plain/StartTLS and ldaps on two
# ports, with a test CA and server certificate this script makes with openssl.
#
#   slapd-ctl.sh install   # apt-get slapd and ldap-utils when absent
#   slapd-ctl.sh init      # certificates, cn=config, empty database (CARDHOUR_TEST_SLAPD_DIR)
#   slapd-ctl.sh start     # start it; the first start loads e2e/testdata/directory.ldif
#   slapd-ctl.sh stop      # returns once it has exited
#   slapd-ctl.sh status    # exit 0 when running
#
# The instance lives in CARDHOUR_TEST_SLAPD_DIR: ca.pem (the CA to trust),
# server.pem/server.key, slapd.ldif (the generated cn=config) and slapd.d/,
# data/ (mdb), ldap-port and ldaps-port (kept across stop/start, so clients
# reconnect to the same address), admin-password (the rootdn's, random per
# instance), pid, log. The suffix is dc=cardhour,dc=test, the rootdn
# cn=admin,dc=cardhour,dc=test. The memberof overlay keeps each user's
# memberOf in step with the groupOfNames entries, as Active Directory does.
set -euo pipefail

ctl_prefix=slapd-ctl
# shellcheck source=scripts/ctl-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ctl-lib.sh"
# slapd, slapadd and slappasswd live in /usr/sbin.
ctl_path_sbin

SUFFIX="dc=cardhour,dc=test"
ROOTDN="cn=admin,$SUFFIX"

cmd_install() {
	if command -v slapd >/dev/null 2>&1 && command -v ldapadd >/dev/null 2>&1; then
		return 0
	fi
	local sudo=()
	[[ "$(id -u)" == 0 ]] || sudo=(sudo)
	# noninteractive: the package's debconf questions (domain, admin password)
	# take their defaults; the packaged database and service are never used.
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq slapd ldap-utils
}

[[ "${1:-}" == install ]] && {
	cmd_install
	exit 0
}

base="$(ctl_need_dir CARDHOUR_TEST_SLAPD_DIR)"
pidfile="$base/slapd.pid"
ldapfile="$base/ldap-port"
ldapsfile="$base/ldaps-port"
log="$base/slapd.log"
ldif="${CARDHOUR_TEST_LDAP_LDIF:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/e2e/testdata/directory.ldif}"

# A CA and a server certificate for 127.0.0.1 and localhost, so StartTLS and
# ldaps are verified by clients exactly as against a company's directory.
make_certs() {
	local ext="$base/server.ext"
	printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "extendedKeyUsage=serverAuth" \
		"basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" >"$ext"
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -keyout "$base/ca.key" -out "$base/ca.pem" \
		-subj "/O=cardhour test/CN=cardhour test CA" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>>"$log"
	openssl req -newkey rsa:2048 -nodes -keyout "$base/server.key" -out "$base/server.csr" \
		-subj "/O=cardhour test/CN=localhost" 2>>"$log"
	openssl x509 -req -in "$base/server.csr" -CA "$base/ca.pem" -CAkey "$base/ca.key" -CAcreateserial \
		-days 30 -out "$base/server.pem" -extfile "$ext" 2>>"$log"
	rm -f "$base/server.csr" "$ext"
}

# cn=config as an LDIF for slapadd -n0: the schemas, the mdb database with
# its rootdn, the memberof overlay, and ACLs under which the service account
# (and anonymous, for the anonymous-search mode) read everything but
# passwords, and a password is only usable to bind.
write_config() {
	local rootpw="$1"
	cat >"$base/slapd.ldif" <<-EOF
		dn: cn=config
		objectClass: olcGlobal
		cn: config
		olcPidFile: $base/slapd.run.pid
		olcArgsFile: $base/slapd.args
		olcTLSCACertificateFile: $base/ca.pem
		olcTLSCertificateFile: $base/server.pem
		olcTLSCertificateKeyFile: $base/server.key

		dn: cn=module{0},cn=config
		objectClass: olcModuleList
		cn: module{0}
		olcModulePath: /usr/lib/ldap
		olcModuleLoad: back_mdb
		olcModuleLoad: memberof

		dn: cn=schema,cn=config
		objectClass: olcSchemaConfig
		cn: schema

		include: file:///etc/ldap/schema/core.ldif
		include: file:///etc/ldap/schema/cosine.ldif
		include: file:///etc/ldap/schema/inetorgperson.ldif
		include: file:///etc/ldap/schema/nis.ldif

		dn: olcDatabase={-1}frontend,cn=config
		objectClass: olcDatabaseConfig
		objectClass: olcFrontendConfig
		olcDatabase: {-1}frontend
		olcSizeLimit: 500

		dn: olcDatabase={0}config,cn=config
		objectClass: olcDatabaseConfig
		olcDatabase: {0}config
		olcAccess: {0}to * by * none

		dn: olcDatabase={1}mdb,cn=config
		objectClass: olcDatabaseConfig
		objectClass: olcMdbConfig
		olcDatabase: {1}mdb
		olcSuffix: $SUFFIX
		olcRootDN: $ROOTDN
		olcRootPW: $rootpw
		olcDbDirectory: $base/data
		olcDbMaxSize: 67108864
		olcDbIndex: objectClass eq
		olcDbIndex: uid eq
		olcDbIndex: member eq
		olcAccess: {0}to attrs=userPassword by self write by anonymous auth by * none
		olcAccess: {1}to * by * read

		dn: olcOverlay={0}memberof,olcDatabase={1}mdb,cn=config
		objectClass: olcOverlayConfig
		objectClass: olcMemberOf
		olcOverlay: {0}memberof
		olcMemberOfRefInt: TRUE
		olcMemberOfGroupOC: groupOfNames
		olcMemberOfMemberAD: member
		olcMemberOfMemberOfAD: memberOf
	EOF
}

cmd_init() {
	command -v slapd >/dev/null 2>&1 || die "slapd not installed (scripts/testenv.sh ensure_packages installs it)"
	[[ ! -e "$base/slapd.d" ]] || die "$base/slapd.d already exists"
	mkdir -p "$base/slapd.d" "$base/data"
	make_certs || die "openssl could not make the test certificates (see $log)"
	local pw
	pw="admin-$(od -An -N9 -tx1 /dev/urandom | tr -d ' \n')"
	printf '%s' "$pw" >"$base/admin-password"
	chmod 600 "$base/admin-password" "$base/ca.key" "$base/server.key"
	write_config "$(slappasswd -s "$pw")"
	slapadd -n0 -F "$base/slapd.d" -l "$base/slapd.ldif" >>"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "slapadd of cn=config failed"
	}
	slaptest -F "$base/slapd.d" -u >>"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "slaptest rejected the configuration"
	}
}

# ldapadd through the running server rather than slapadd, so the memberof
# overlay sees each group written and fills in memberOf.
load_data() {
	[[ -r "$ldif" ]] || die "no directory LDIF at $ldif"
	ldapadd -x -H "ldap://127.0.0.1:$1" -D "$ROOTDN" -y "$base/admin-password" -f "$ldif" >>"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "loading $ldif failed"
	}
	touch "$base/loaded"
}

cmd_start() {
	! ctl_already_running "$pidfile" || return 0
	[[ -e "$base/slapd.d" ]] || cmd_init
	[[ -s "$ldapfile" ]] || ctl_free_port >"$ldapfile"
	[[ -s "$ldapsfile" ]] || ctl_free_port "$(cat "$ldapfile")" >"$ldapsfile"
	local port sport
	port="$(cat "$ldapfile")"
	sport="$(cat "$ldapsfile")"
	# -d keeps it in the foreground (so the recorded pid is slapd's); stats
	# logs each connection and operation, which is what a failing test needs.
	# Run as whoever runs the tests (root in CI): no -u, the files are theirs.
	ctl_launch "$pidfile" "$log" slapd -F "$base/slapd.d" -h "ldap://127.0.0.1:$port/ ldaps://127.0.0.1:$sport/" -d stats
	ctl_wait_started slapd "$ctl_launched" "$log" 10 "$port" "$sport"
	[[ -e "$base/loaded" ]] || load_data "$port"
	ctl_say "ldap://127.0.0.1:$port and ldaps://127.0.0.1:$sport (pid $ctl_launched)"
}

describe() {
	echo "ldap://127.0.0.1:$(cat "$ldapfile") and ldaps://127.0.0.1:$(cat "$ldapsfile")"
}

if [[ "${1:-}" == init ]]; then
	cmd_init
else
	ctl_main "$pidfile" "install|init|start|stop|status" "${1:-}"
fi
