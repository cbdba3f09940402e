package ldap_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"cardhour/directory"
	"cardhour/directory/ldap"
	"cardhour/errs"
)

// The users of e2e/testdata/directory.ldif, which scripts/slapd-ctl.sh loads.
const (
	alicePassword = "alice-pw-Wang1"
	aliceDN       = "uid=alice,ou=people,dc=cardhour,dc=test"
	trainDN       = "cn=gpu-train,ou=groups,dc=cardhour,dc=test"
	leadsDN       = "cn=gpu-leads,ou=groups,dc=cardhour,dc=test"
)

// testDir is the slapd that scripts/testenv.sh started.
type testDir struct {
	url, ldapsURL, ca, base, bindDN, bindPassword, adminDN, adminPassword string
}

func mustTestDir(t *testing.T) testDir {
	t.Helper()
	d := testDir{
		url:           os.Getenv("CARDHOUR_TEST_LDAP_URL"),
		ldapsURL:      os.Getenv("CARDHOUR_TEST_LDAPS_URL"),
		ca:            os.Getenv("CARDHOUR_TEST_LDAP_CA"),
		base:          os.Getenv("CARDHOUR_TEST_LDAP_BASE"),
		bindDN:        os.Getenv("CARDHOUR_TEST_LDAP_BIND_DN"),
		bindPassword:  os.Getenv("CARDHOUR_TEST_LDAP_BIND_PASSWORD"),
		adminDN:       os.Getenv("CARDHOUR_TEST_LDAP_ADMIN_DN"),
		adminPassword: os.Getenv("CARDHOUR_TEST_LDAP_ADMIN_PASSWORD"),
	}
	if d.url == "" {
		t.Skip("CARDHOUR_TEST_LDAP_URL is not set: run under scripts/testenv.sh, which starts slapd")
	}
	return d
}

// config is the setup a company would use: StartTLS verified against the
// test CA, the service account, groups from memberOf only.
func (d testDir) config() ldap.Config {
	return ldap.Config{
		URL:          d.url,
		StartTLS:     true,
		CAFile:       d.ca,
		BindDN:       d.bindDN,
		BindPassword: d.bindPassword,
		UserBase:     "ou=people," + d.base,
	}
}

func mustNew(t *testing.T, cfg ldap.Config) *ldap.Directory {
	t.Helper()
	dir, err := ldap.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return dir
}

// mustAdmin is a connection bound as the rootdn, to change entries.
func (d testDir) mustAdmin(t *testing.T) *goldap.Conn {
	t.Helper()
	l, err := goldap.DialURL(d.url)
	if err != nil {
		t.Fatalf("admin dial: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	if err := l.Bind(d.adminDN, d.adminPassword); err != nil {
		t.Fatalf("admin bind: %v", err)
	}
	return l
}

// mustTempUser adds a person who exists only for this test, and deletes it
// at the end if the test did not.
func (d testDir) mustTempUser(t *testing.T, admin *goldap.Conn, password string) (uid, dn string) {
	t.Helper()
	uid = fmt.Sprintf("tmp%d", time.Now().UnixNano())
	dn = "uid=" + uid + ",ou=people," + d.base
	add := goldap.NewAddRequest(dn, nil)
	add.Attribute("objectClass", []string{"inetOrgPerson"})
	add.Attribute("uid", []string{uid})
	add.Attribute("cn", []string{"Temp " + uid})
	add.Attribute("sn", []string{"Temp"})
	add.Attribute("userPassword", []string{password})
	if err := admin.Add(add); err != nil {
		t.Fatalf("add %s: %v", dn, err)
	}
	t.Cleanup(func() { _ = admin.Del(goldap.NewDelRequest(dn, nil)) })
	return uid, dn
}

func wantErr(t *testing.T, err error, code errs.Code, key string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code || e.Key != key {
		t.Fatalf("error = %v, want %s %s", err, code, key)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestAuthenticateGivesIdentityAndGroups(t *testing.T) {
	d := mustTestDir(t)
	dir := mustNew(t, d.config())
	// Typed in capitals: the directory matches case-blind, the portal
	// keeps the entry's own name in lower case.
	id, err := dir.Authenticate(ctx(t), " ALICE ", alicePassword)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if id.Provider != directory.LDAP || id.Subject != aliceDN || id.Username != "alice" ||
		id.DisplayName != "Alice Wang" || id.Email != "alice@cardhour.test" {
		t.Errorf("identity = %+v", id)
	}
	for _, g := range []string{"gpu-train", trainDN, "gpu-leads", leadsDN} {
		if !id.InGroup(g) {
			t.Errorf("groups %q lack %q (memberOf from the overlay)", id.Groups, g)
		}
	}
	if id.InGroup("gpu-viewers") {
		t.Errorf("groups %q name carol's group gpu-viewers", id.Groups)
	}
}

func TestAuthenticateWithGroupSearch(t *testing.T) {
	d := mustTestDir(t)
	admin := d.mustAdmin(t)
	uid, userDN := d.mustTempUser(t, admin, "tmp-pw-1")
	// A groupOfUniqueNames is outside what the memberof overlay tracks,
	// so only the group search can find it.
	groupDN := "cn=" + uid + "-uniq,ou=groups," + d.base
	add := goldap.NewAddRequest(groupDN, nil)
	add.Attribute("objectClass", []string{"groupOfUniqueNames"})
	add.Attribute("cn", []string{uid + "-uniq"})
	add.Attribute("uniqueMember", []string{userDN})
	if err := admin.Add(add); err != nil {
		t.Fatalf("add group: %v", err)
	}
	t.Cleanup(func() { _ = admin.Del(goldap.NewDelRequest(groupDN, nil)) })

	cfg := d.config()
	id, err := mustNew(t, cfg).Authenticate(ctx(t), uid, "tmp-pw-1")
	if err != nil {
		t.Fatalf("Authenticate without group base: %v", err)
	}
	if id.InGroup(uid + "-uniq") {
		t.Fatalf("groups %q: without a group base only memberOf counts", id.Groups)
	}
	cfg.GroupBase = "ou=groups," + d.base
	id, err = mustNew(t, cfg).Authenticate(ctx(t), uid, "tmp-pw-1")
	if err != nil {
		t.Fatalf("Authenticate with group base: %v", err)
	}
	if !id.InGroup(uid+"-uniq") || !id.InGroup(groupDN) {
		t.Errorf("groups %q lack %s and its DN", id.Groups, uid+"-uniq")
	}
}

func TestAuthenticateRefusesBadCredentials(t *testing.T) {
	d := mustTestDir(t)
	dir := mustNew(t, d.config())
	for name, c := range map[string]struct{ user, password string }{
		"wrong password": {"alice", "alice-pw-wrong"},
		// LDAP takes a DN with no password as an unauthenticated bind,
		// which succeeds: it must never reach the directory.
		"empty password":  {"alice", ""},
		"unknown user":    {"mallory", alicePassword},
		"empty user":      {"  ", alicePassword},
		"another's login": {"bob", alicePassword},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dir.Authenticate(ctx(t), c.user, c.password)
			wantErr(t, err, errs.Unauthorized, "auth.bad_credentials")
		})
	}
}

// A login name is data, never filter syntax: unescaped, each of these finds
// alice and her password would let it in under a name that is not hers.
func TestAuthenticateEscapesTheLogin(t *testing.T) {
	d := mustTestDir(t)
	plain := mustNew(t, d.config())
	cfg := d.config()
	cfg.UserFilter = "(&(objectClass=inetOrgPerson)(uid=%s))"
	and := mustNew(t, cfg)
	for _, c := range []struct {
		dir  *ldap.Directory
		user string
	}{
		{plain, "al*"},
		{plain, "*)(uid=*"},
		{plain, "*"},
		{and, "alice)(uid=*"},
		{and, "*)(|(uid=alice"},
	} {
		t.Run(c.user, func(t *testing.T) {
			id, err := c.dir.Authenticate(ctx(t), c.user, alicePassword)
			wantErr(t, err, errs.Unauthorized, "auth.bad_credentials")
			if id.Subject != "" {
				t.Errorf("identity %+v returned with the error", id)
			}
		})
	}
}

func TestAuthenticateOverTLS(t *testing.T) {
	d := mustTestDir(t)
	for name, mod := range map[string]func(*ldap.Config){
		"StartTLS with the CA file": func(*ldap.Config) {},
		"ldaps with the CA file":    func(c *ldap.Config) { c.URL = d.ldapsURL },
		"ldaps by localhost":        func(c *ldap.Config) { c.URL = strings.Replace(d.ldapsURL, "127.0.0.1", "localhost", 1) },
		"StartTLS, unverified":      func(c *ldap.Config) { c.CAFile, c.InsecureSkipVerify = "", true },
		"plain, asked for":          func(c *ldap.Config) { c.StartTLS, c.CAFile = false, "" },
		"anonymous search":          func(c *ldap.Config) { c.BindDN, c.BindPassword = "", "" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := d.config()
			mod(&cfg)
			id, err := mustNew(t, cfg).Authenticate(ctx(t), "alice", alicePassword)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if id.Subject != aliceDN || !id.InGroup("gpu-train") {
				t.Errorf("identity = %+v", id)
			}
		})
	}
}

// mustOtherCA writes a CA certificate that did not sign the server's.
func mustOtherCA(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "not the cardhour test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUntrustedCertificateIsUnavailable(t *testing.T) {
	d := mustTestDir(t)
	other := mustOtherCA(t)
	for name, mod := range map[string]func(*ldap.Config){
		"StartTLS, wrong CA":  func(c *ldap.Config) { c.CAFile = other },
		"ldaps, wrong CA":     func(c *ldap.Config) { c.URL, c.CAFile = d.ldapsURL, other },
		"ldaps, system roots": func(c *ldap.Config) { c.URL, c.CAFile = d.ldapsURL, "" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := d.config()
			mod(&cfg)
			_, err := mustNew(t, cfg).Authenticate(ctx(t), "alice", alicePassword)
			wantErr(t, err, errs.Unavailable, "directory.unreachable")
		})
	}
}

func TestServiceAccountRefusedIsUnavailable(t *testing.T) {
	d := mustTestDir(t)
	cfg := d.config()
	cfg.BindPassword = "not-the-service-password"
	dir := mustNew(t, cfg)
	// Not the user's fault: a wrong service password must not read as a
	// wrong user password (nor, in the sync, as a user gone).
	_, err := dir.Authenticate(ctx(t), "alice", alicePassword)
	wantErr(t, err, errs.Unavailable, "directory.unreachable")
	_, err = dir.Lookup(ctx(t), "alice")
	wantErr(t, err, errs.Unavailable, "directory.unreachable")
	wantErr(t, dir.Ping(ctx(t)), errs.Unavailable, "directory.unreachable")
}

// closedPort is a local port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestUnreachableDirectoryIsUnavailable(t *testing.T) {
	d := mustTestDir(t)
	cfg := d.config()
	cfg.URL = "ldap://" + closedPort(t)
	dir := mustNew(t, cfg)
	start := time.Now()
	_, err := dir.Authenticate(ctx(t), "alice", alicePassword)
	wantErr(t, err, errs.Unavailable, "directory.unreachable")
	// Unavailable, never NotFound: the sync would disable everyone.
	_, err = dir.Lookup(ctx(t), "alice")
	wantErr(t, err, errs.Unavailable, "directory.unreachable")
	wantErr(t, dir.Ping(ctx(t)), errs.Unavailable, "directory.unreachable")
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("a refused connection took %s to report", el)
	}
}

// stallingServer accepts connections and never answers, as a directory
// behind a broken load balancer does.
func stallingServer(t *testing.T) string {
	t.Helper()
	return stallingServerWith(t, func(net.Conn) {})
}

// stallingServerWith runs greet on each connection it accepts and then
// holds the connection open without a word more.
func stallingServerWith(t *testing.T, greet func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(done)
				return
			}
			held = append(held, c)
			go greet(c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestStallingDirectoryTimesOut(t *testing.T) {
	d := mustTestDir(t)
	addr := stallingServer(t)
	for name, c := range map[string]struct {
		url      string
		timeout  time.Duration
		deadline time.Duration
	}{
		"StartTLS, Timeout":     {"ldap://" + addr, 300 * time.Millisecond, 20 * time.Second},
		"ldaps, Timeout":        {"ldaps://" + addr, 300 * time.Millisecond, 20 * time.Second},
		"StartTLS, ctx":         {"ldap://" + addr, 20 * time.Second, 300 * time.Millisecond},
		"ldaps, ctx":            {"ldaps://" + addr, 20 * time.Second, 300 * time.Millisecond},
		"plain search, ctx":     {"ldap://" + addr, 20 * time.Second, 300 * time.Millisecond},
		"plain search, Timeout": {"ldap://" + addr, 300 * time.Millisecond, 20 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := d.config()
			cfg.URL, cfg.Timeout = c.url, c.timeout
			if strings.HasPrefix(name, "plain") {
				cfg.StartTLS = false
			}
			cx, cancel := context.WithTimeout(context.Background(), c.deadline)
			defer cancel()
			start := time.Now()
			_, err := mustNew(t, cfg).Authenticate(cx, "alice", alicePassword)
			wantErr(t, err, errs.Unavailable, "directory.unreachable")
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("gave up after %s, want about 300ms", el)
			}
		})
	}
}

// startTLSThenStall answers the first request (StartTLS, message 1) with
// success and then never takes part in the TLS handshake: the library
// waits for that handshake without a timeout of its own.
func startTLSThenStall(t *testing.T) string {
	t.Helper()
	addr := stallingServerWith(t, func(c net.Conn) {
		buf := make([]byte, 512)
		if _, err := c.Read(buf); err != nil {
			return
		}
		// LDAPMessage { messageID 1, extendedResp [APPLICATION 24] { success, "", "" } }
		_, _ = c.Write([]byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00})
	})
	return addr
}

func TestStalledTLSHandshakeTimesOut(t *testing.T) {
	d := mustTestDir(t)
	cfg := d.config()
	cfg.URL, cfg.Timeout = "ldap://"+startTLSThenStall(t), 300*time.Millisecond
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := mustNew(t, cfg).Authenticate(cx, "alice", alicePassword)
	wantErr(t, err, errs.Unavailable, "directory.unreachable")
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("gave up after %s, want about 300ms", el)
	}
}

func TestLookup(t *testing.T) {
	d := mustTestDir(t)
	dir := mustNew(t, d.config())
	id, err := dir.Lookup(ctx(t), "Bob")
	if err != nil {
		t.Fatalf("Lookup bob: %v", err)
	}
	if id.Username != "bob" || id.DisplayName != "Bob Li" || !id.InGroup("gpu-train") || id.InGroup("gpu-leads") {
		t.Errorf("identity = %+v", id)
	}

	admin := d.mustAdmin(t)
	uid, dn := d.mustTempUser(t, admin, "tmp-pw-2")
	if id, err := dir.Lookup(ctx(t), uid); err != nil || id.Subject != dn {
		t.Fatalf("Lookup of the new user = %+v, %v", id, err)
	}
	if err := admin.Del(goldap.NewDelRequest(dn, nil)); err != nil {
		t.Fatalf("delete %s: %v", dn, err)
	}
	_, err = dir.Lookup(ctx(t), uid)
	wantErr(t, err, errs.NotFound, "directory.user_gone")
	_, err = dir.Authenticate(ctx(t), uid, "tmp-pw-2")
	wantErr(t, err, errs.Unauthorized, "auth.bad_credentials")
}

// Someone taken out of a group is out of it at their next login. A user
// and group of the test's own, so that suites reading alice's groups at the
// same time (e2e) are not disturbed.
func TestRemovedFromGroupAtNextLogin(t *testing.T) {
	d := mustTestDir(t)
	admin := d.mustAdmin(t)
	uid, userDN := d.mustTempUser(t, admin, "tmp-pw-3")
	group := uid + "-team"
	groupDN := "cn=" + group + ",ou=groups," + d.base
	add := goldap.NewAddRequest(groupDN, nil)
	add.Attribute("objectClass", []string{"groupOfNames"})
	add.Attribute("cn", []string{group})
	// groupOfNames needs a member left after the user goes.
	add.Attribute("member", []string{userDN, d.bindDN})
	if err := admin.Add(add); err != nil {
		t.Fatalf("add group: %v", err)
	}
	t.Cleanup(func() { _ = admin.Del(goldap.NewDelRequest(groupDN, nil)) })

	for _, groupBase := range []string{"", "ou=groups," + d.base} {
		cfg := d.config()
		cfg.GroupBase = groupBase
		id, err := mustNew(t, cfg).Authenticate(ctx(t), uid, "tmp-pw-3")
		if err != nil || !id.InGroup(group) || !id.InGroup(groupDN) {
			t.Fatalf("group base %q: before removal: %+v, %v", groupBase, id, err)
		}
	}
	mod := goldap.NewModifyRequest(groupDN, nil)
	mod.Delete("member", []string{userDN})
	if err := admin.Modify(mod); err != nil {
		t.Fatalf("remove member: %v", err)
	}
	for _, groupBase := range []string{"", "ou=groups," + d.base} {
		cfg := d.config()
		cfg.GroupBase = groupBase
		dir := mustNew(t, cfg)
		id, err := dir.Authenticate(ctx(t), uid, "tmp-pw-3")
		if err != nil {
			t.Fatalf("group base %q: Authenticate after removal: %v", groupBase, err)
		}
		if id.InGroup(group) || id.InGroup(groupDN) {
			t.Errorf("group base %q: groups %q still name %s", groupBase, id.Groups, group)
		}
		if id, err = dir.Lookup(ctx(t), uid); err != nil || slices.ContainsFunc(id.Groups, func(g string) bool { return strings.EqualFold(g, groupDN) }) {
			t.Errorf("group base %q: Lookup after removal: %q, %v", groupBase, id.Groups, err)
		}
	}
}

func TestPing(t *testing.T) {
	d := mustTestDir(t)
	if err := mustNew(t, d.config()).Ping(ctx(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	cfg := d.config()
	cfg.UserBase = "ou=nobody," + d.base
	wantErr(t, mustNew(t, cfg).Ping(ctx(t)), errs.Unavailable, "directory.unreachable")
}
