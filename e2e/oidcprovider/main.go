// Command oidcprovider is a real OpenID Connect provider for cardhour's
// tests: zitadel/oidc's OP (its example storage and login page, wrapped)
// with one confidential client, users read from a JSON file at every login
// (so a test can change someone's groups between two logins), and ID tokens
// that carry preferred_username, email, name and a groups array.
//
// Built and started by scripts/oidc-ctl.sh; not part of cardhour's module,
// so zitadel's dependencies stay out of cardhour's go.mod.
//
// The login page (GET /login/username?authRequestID=…) is a form that
// POSTs to /login/username with the fields id (hidden), username and
// password (inputs with those ids).
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9998", "listen address")
	issuer := flag.String("issuer", "", "issuer URL (default http://ADDR)")
	clientID := flag.String("client-id", "cardhour", "the one client's id")
	clientSecret := flag.String("client-secret", "", "the client's secret (required)")
	redirects := flag.String("redirect", "http://127.0.0.1:*/login/oidc/callback",
		"redirect URIs the client may use, comma-separated; one with * is a glob (* matches within one path segment, e.g. any port)")
	usersFile := flag.String("users", "", "JSON users file, re-read at every login: [{\"username\",\"password\",\"email\",\"name\",\"groups\":[…]}] (required)")
	flag.Parse()
	if *clientSecret == "" || *usersFile == "" {
		fmt.Fprintln(os.Stderr, "oidcprovider: -client-secret and -users are required")
		os.Exit(2)
	}
	if *issuer == "" {
		*issuer = "http://" + *addr
	}
	users := &userFile{path: *usersFile}
	if _, err := users.load(); err != nil {
		log.Fatalf("oidcprovider: %v", err)
	}
	st := &store{
		Storage: storage.NewStorage(users),
		users:   users,
		client:  newClient(*clientID, *clientSecret, strings.Split(*redirects, ",")),
	}
	router := exampleop.SetupServer(*issuer, st, nil, false)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("oidcprovider: %v", err)
	}
	log.Printf("oidcprovider: issuer %s, client %s, listening on %s", *issuer, *clientID, ln.Addr())
	srv := &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
