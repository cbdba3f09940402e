package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"cardhour/money"
	"cardhour/store/storetest"
	"cardhour/web"
)

// TestAdminAddsCardTypeSQLite is the e2e acceptance on the embedded
// default: the binary on a fresh data directory (SQLite, demo fleet), an
// admin logs in, adds a card type, sees it listed, trips the form's
// validation, and switches to English. Every step is a screenshot in
// e2e/artifacts/sqlite-*.png, in zh-CN and en.
func TestAdminAddsCardTypeSQLite(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "sqlite", nil)
	walkPortal(t, p, "sqlite", true)
}

// TestAdminAddsCardTypeMariaDB runs the same walk with the same binary on
// an empty MariaDB database: it migrates it at start and serves the same
// portal (without demo data, the default for MySQL).
func TestAdminAddsCardTypeMariaDB(t *testing.T) {
	requireBrowser(t)
	dsn, _ := storetest.MySQLDSN(t) // skips without CARDHOUR_TEST_MYSQL
	vars := map[string]string{"CARDHOUR_DB": "mysql://" + dsn}
	p := startPortal(t, "mariadb", vars)

	res, err := http.Get(p.URL + "/readyz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/readyz on MariaDB: %v %v", res, err)
	}
	res.Body.Close()

	walkPortal(t, p, "mariadb", false)

	// The same binary reports the schema it created as fully applied.
	cmd := exec.Command(binPath, "migrate", "status")
	cmd.Env = append(cmd.Environ(), "CARDHOUR_DB=mysql://"+dsn, "CARDHOUR_DATA="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("migrate status on MariaDB: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	applied := regexp.MustCompile(`^\d{5}  applied `)
	for _, l := range lines {
		if !applied.MatchString(l) {
			t.Errorf("migrate status on MariaDB: %q is not applied", l)
		}
	}
	if len(lines) < 2 {
		t.Errorf("migrate status listed %d migrations:\n%s", len(lines), out)
	}
}

// cardType is what the test types into the form.
type cardType struct{ name, vram, price, bf16 string }

func walkPortal(t *testing.T, p *portal, prefix string, demo bool) {
	removeShots(t, prefix)
	b := newBrowser(t, prefix)
	zh, en := web.LangZH, web.LangEN
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

	// Log in, in the default language.
	b.do("open /login", chromedp.Navigate(p.URL+"/login"), chromedp.WaitVisible(testid("login-form")))
	if l := b.htmlLang(); l != zh {
		t.Errorf("login page: <html lang=%q>, want %q", l, zh)
	}
	b.screenshot("login.zh-CN")
	b.fill([][2]string{{"username", "admin"}, {"password", adminPassword}})
	b.do("log in", chromedp.Click(testid("login-submit")), chromedp.WaitVisible(testid("nav-admin")))
	if got := b.text(`[data-testid="nav-admin"]`); got != web.T(zh, "nav.admin") {
		t.Errorf("zh-CN nav: %q, want %q", got, web.T(zh, "nav.admin"))
	}
	b.screenshot("home.zh-CN")

	// The card types, then one added through the form.
	b.do("open card types", chromedp.Navigate(p.URL+"/admin/card-types"), chromedp.WaitVisible(testid("cardtypes-table")))
	rows := b.count(`[data-testid="cardtype-row"]`)
	if demo && rows == 0 {
		t.Errorf("the demo fleet shows no card types")
	}
	if !demo && rows != 0 {
		t.Errorf("an empty database lists %d card types", rows)
	}
	b.screenshot("cardtypes.zh-CN")

	rows = addCardType(t, b, zh, rows, cardType{"NVIDIA H20 96GB", "96", "9.5", "148"})
	b.screenshot("cardtype-added.zh-CN")
	rejectNameless(t, b, zh, rows)
	b.screenshot("cardtype-error.zh-CN")

	// Switch to English on the page the user is on.
	b.do("switch to English", chromedp.Click(testid("lang-switch")), chromedp.WaitReady(chromedp.CSS(`html[lang="en"]`)))
	for id, key := range map[string]string{"nav-admin": "nav.admin", "nav-booking": "nav.booking", "nav-board": "nav.board"} {
		if got := b.text(`[data-testid="` + id + `"]`); got != web.T(en, key) {
			t.Errorf("English nav %s: %q, want %q", id, got, web.T(en, key))
		}
	}
	if got := b.text("h1"); got != web.T(en, "admin.cardtypes") {
		t.Errorf("after the switch the page is titled %q, want %q", got, web.T(en, "admin.cardtypes"))
	}
	if !strings.Contains(b.text(`[data-testid="cardtypes-table"]`), "NVIDIA H20 96GB") {
		t.Errorf("after the switch the new card type is not listed")
	}
	b.screenshot("cardtypes.en")
	rows = addCardType(t, b, en, rows, cardType{"NVIDIA L20 48GB", "48", "4.5", "119.5"})
	b.screenshot("cardtype-added.en")
	rejectNameless(t, b, en, rows)
	b.screenshot("cardtype-error.en")

	b.do("open home", chromedp.Navigate(p.URL+"/"), chromedp.WaitVisible(testid("nav-admin")))
	if l := b.htmlLang(); l != en {
		t.Errorf("home after the switch: <html lang=%q>, want en", l)
	}
	b.screenshot("home.en")

	// Log out: the choice of language outlives the session.
	b.do("log out", chromedp.Click(testid("logout")), chromedp.WaitVisible(testid("login-form")))
	if got := b.text("h1"); got != web.T(en, "login.title") {
		t.Errorf("login page after logout: %q, want %q", got, web.T(en, "login.title"))
	}
	b.screenshot("login.en")

	// The error page for a logged-out visitor, in both languages.
	b.do("open an admin page logged out", chromedp.Navigate(p.URL+"/admin/card-types"), chromedp.WaitVisible(testid("error-page")))
	checkErrorPage(t, b, en, "401")
	b.screenshot("error-401.en")
	b.do("switch back to Chinese", chromedp.Click(testid("lang-switch")), chromedp.WaitReady(chromedp.CSS(`html[lang="zh-CN"]`)),
		chromedp.WaitVisible(testid("error-page")))
	checkErrorPage(t, b, zh, "401")
	b.screenshot("error-401.zh-CN")

	all := b.problems()
	bad := pageProblems(all)
	for _, pr := range bad {
		t.Errorf("the browser reported: %s", pr)
	}
	t.Logf("the browser logged %d errors, %d of them the expected error statuses", len(all), len(all)-len(bad))
}

// addCardType submits the form and checks the redirect's flash and the new
// row; it returns the new row count.
func addCardType(t *testing.T, b *browser, lang string, rows int, ct cardType) int {
	t.Helper()
	b.fill([][2]string{{"name", ct.name}, {"vram_gib", ct.vram}, {"price", ct.price}, {"tflops_bf16", ct.bf16}})
	b.do("submit "+ct.name, chromedp.Click(chromedp.CSS(`[data-testid="cardtype-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if got, want := b.text(`[data-testid="flash"]`), web.T(lang, "admin.created", ct.name); got != want {
		t.Errorf("flash %q, want %q", got, want)
	}
	if n := b.count(`[data-testid="cardtype-row"]`); n != rows+1 {
		t.Errorf("%d card type rows after adding, want %d", n, rows+1)
	}
	row := b.rowText(ct.name)
	fen, err := money.ParseYuan(ct.price)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ct.vram, ct.bf16, money.Fen(fen).Yuan()} {
		if !strings.Contains(row, want) {
			t.Errorf("row of %s is %q, want it to show %s", ct.name, row, want)
		}
	}
	return rows + 1
}

// rejectNameless submits the form without a name: the same page comes back
// with the message beside the field and nothing added.
func rejectNameless(t *testing.T, b *browser, lang string, rows int) {
	t.Helper()
	b.fill([][2]string{{"vram_gib", "80"}, {"price", "5"}, {"tflops_bf16", "100"}})
	b.do("submit without a name", chromedp.Click(chromedp.CSS(`[data-testid="cardtype-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-name"]`)))
	if got, want := b.text(`[data-testid="error-name"]`), web.T(lang, "field.required"); got != want {
		t.Errorf("inline error %q, want %q", got, want)
	}
	if got, want := b.text(`[data-testid="form-error"]`), web.T(lang, "form.has_errors"); got != want {
		t.Errorf("form error %q, want %q", got, want)
	}
	if n := b.count(`[data-testid="cardtype-row"]`); n != rows {
		t.Errorf("%d card type rows after a rejected form, want %d", n, rows)
	}
	if v, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS("#f-vram_gib"))); err != nil || v != "80" {
		t.Errorf("the rejected form lost what was typed: vram %q (%v)", v, err)
	}
}

func checkErrorPage(t *testing.T, b *browser, lang, status string) {
	t.Helper()
	got, err := chromedp.Run(b.ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid="error-page"]`), "data-status"))
	if err != nil || got.Value != status {
		t.Errorf("error page data-status %q (%v), want %s", got.Value, err, status)
	}
	if h := b.text(`[data-testid="error-page"] h1`); h != web.T(lang, "status."+status) {
		t.Errorf("%s error page heading %q, want %q", lang, h, web.T(lang, "status."+status))
	}
	if l := b.htmlLang(); l != lang {
		t.Errorf("error page <html lang=%q>, want %q", l, lang)
	}
}

// rowText is the text of the card type row that names name.
func (b *browser) rowText(name string) string {
	b.t.Helper()
	js := fmt.Sprintf(`[...document.querySelectorAll('[data-testid="cardtype-row"]')].map(r => r.innerText).find(t => t.includes(%q)) || ""`, name)
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.fail("read the row of "+name, err)
	}
	if s == "" {
		b.t.Errorf("no card type row names %q", name)
	}
	return s
}

// pageProblems drops the network errors the walk causes on purpose: the
// 401 and 422 pages are answered with those statuses, which Chromium logs.
// A failed asset (a stylesheet, a script) stays a problem.
func pageProblems(all []string) []string {
	var out []string
	for _, p := range all {
		if strings.HasPrefix(p, "network: ") && !strings.Contains(p, "/assets/") {
			continue
		}
		out = append(out, p)
	}
	return out
}
