package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"cardhour/schedule"
	"cardhour/server/servertest"
	"cardhour/store"
)

// ledgerFixture is a team whose member booked two cards and released them
// early: one finished round to record output against.
type ledgerFixture struct {
	e       *servertest.Env
	team    *store.Team
	task    *store.Task
	booking int64
	month   string
}

func ledgerActor(a *servertest.Account) context.Context {
	return store.WithActor(context.Background(), store.Actor{UserID: a.ID, Username: a.Username})
}

func newLedgerFixture(t *testing.T) *ledgerFixture {
	t.Helper()
	e := servertest.New(t, servertest.Options{})
	ctx := ledgerActor(e.Users[store.RoleAdmin])
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	team, err := e.St.CreateTeam(ctx, store.TeamInput{Name: "大模型组"})
	must(err)
	_, err = e.St.SetMembership(ctx, team.ID, e.Users[store.RoleMember].ID, store.TeamRoleMember)
	must(err)
	_, err = e.St.SetMembership(ctx, team.ID, e.Users[store.RoleManager].ID, store.TeamRoleManager)
	must(err)
	ct, err := e.St.CreateCardType(ctx, store.CardTypeInput{Name: "H800", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 2200})
	must(err)
	host, err := e.St.CreateHost(ctx, store.HostInput{Name: "gpu-01"})
	must(err)
	for i := range 2 {
		_, err := e.St.CreateCard(ctx, store.CardInput{UUID: fmt.Sprintf("GPU-2000000%d-aaaa-bbbb-cccc-%012d", i, i), GPUIndex: i, HostID: host.ID, CardTypeID: ct.ID})
		must(err)
	}
	now := time.Now()
	_, err = e.St.CreateQuota(ctx, store.QuotaInput{TeamID: team.ID, CardTypeID: ct.ID, CardHours: 100, ValidFrom: now.Add(-time.Hour), ExpiresAt: now.Add(30 * 24 * time.Hour)})
	must(err)
	member := ledgerActor(e.Users[store.RoleMember])
	task, err := e.St.CreateTask(member, store.TaskInput{TeamID: team.ID, Name: "SFT 指令微调", Priority: schedule.Normal, EstimateCardHours: 10, DataReadiness: schedule.DataReady})
	must(err)
	b, err := e.St.CreateBooking(member, store.BookingRequest{TaskID: task.ID, CardTypeID: ct.ID, Count: 2, Start: now.Add(-time.Minute), End: now.Add(2 * time.Hour)})
	must(err)
	time.Sleep(1100 * time.Millisecond) // a round of whole card-seconds, so it has a cost and a bar
	_, err = e.St.ReleaseBooking(member, b.Booking.ID)
	must(err)
	return &ledgerFixture{e: e, team: team, task: task, booking: b.Booking.ID, month: store.MonthOf(time.Now(), e.Cfg.TZ)}
}

func (f *ledgerFixture) roundPath() string { return fmt.Sprintf("/ledger/rounds/%d", f.booking) }

func TestMemberRecordsAndCorrectsAnOutputInThePage(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	c := f.e.Client()
	c.MustLogin(f.e.Users[store.RoleMember].Username, f.e.Users[store.RoleMember].Password)

	page := c.Get(f.roundPath())
	doc := page.Doc(t)
	if page.StatusCode != http.StatusOK || doc.Find(`[data-testid=output-form]`).Length() != 1 {
		t.Fatalf("round page %d without the output form:\n%.2000s", page.StatusCode, page)
	}
	if got := doc.Find(`[data-testid=round-cost]`).Text(); got == "" {
		t.Error("the round page shows no cost")
	}

	// A quantity that is no number is reported next to its input.
	bad := c.PostForm(f.roundPath()+"/outputs", url.Values{"quantity": {"three"}, "unit": {"epochs"}}, true)
	if bad.StatusCode != http.StatusUnprocessableEntity || bad.Doc(t).Find(`[data-testid=error-quantity]`).Length() != 1 {
		t.Fatalf("bad quantity: status %d:\n%.1500s", bad.StatusCode, bad)
	}
	if v, _ := bad.Doc(t).Find(`#f-unit`).Attr("value"); v != "epochs" {
		t.Errorf("the form lost the unit: %q", v)
	}

	ok := c.PostForm(f.roundPath()+"/outputs", url.Values{"quantity": {"1,200"}, "unit": {"images"}, "note": {"增强后的样本"}}, true)
	if ok.StatusCode != http.StatusSeeOther {
		t.Fatalf("record: status %d:\n%.1500s", ok.StatusCode, ok)
	}
	doc = c.Get(f.roundPath()).Doc(t)
	entries := doc.Find(`[data-testid=output-entry]`)
	if entries.Length() != 1 || strings.TrimSpace(entries.Find(`[data-testid=output-quantity]`).Text()) != "1,200" ||
		strings.TrimSpace(entries.Find(`[data-testid=output-unit]`).Text()) != "images" {
		t.Fatalf("history after recording: %q", entries.Text())
	}
	if !strings.Contains(doc.Find(`[data-testid=flash]`).Text(), "1200 images") {
		t.Errorf("flash %q", doc.Find(`[data-testid=flash]`).Text())
	}
	id, _ := entries.Attr("data-id")

	// The correction opens pre-filled and appends a new entry.
	form := c.Get(f.roundPath() + "?correct=" + id).Doc(t)
	if v, _ := form.Find(`input[name=corrects_id]`).Attr("value"); v != id {
		t.Fatalf("the correction form corrects %q, want %s", v, id)
	}
	fix := c.PostForm(f.roundPath()+"/outputs", url.Values{"quantity": {"1100"}, "unit": {"images"}, "corrects_id": {id}}, true)
	if fix.StatusCode != http.StatusSeeOther {
		t.Fatalf("correct: status %d:\n%.1500s", fix.StatusCode, fix)
	}
	doc = c.Get(f.roundPath()).Doc(t)
	if n := doc.Find(`[data-testid=output-entry]`).Length(); n != 2 || doc.Find(`[data-testid=output-superseded]`).Length() != 1 {
		t.Errorf("history after the correction: %d entries, %d superseded", n, doc.Find(`[data-testid=output-superseded]`).Length())
	}
	again := c.PostForm(f.roundPath()+"/outputs", url.Values{"quantity": {"1"}, "unit": {"images"}, "corrects_id": {id}}, true)
	if again.StatusCode != http.StatusConflict || again.Doc(t).Find(`[data-testid=form-error]`).Length() != 1 {
		t.Errorf("second correction of one entry: status %d", again.StatusCode)
	}

	// The ledger lists the round with its current output.
	list := c.Get("/ledger").Doc(t)
	row := list.Find(`[data-testid=ledger-row]`)
	if row.Length() != 1 || !strings.Contains(row.Find(`[data-testid=round-output]`).Text(), "1,100 images") {
		t.Errorf("ledger row: %q", row.Text())
	}
	task := c.Get(fmt.Sprintf("/ledger/tasks/%d", f.task.ID)).Doc(t)
	if task.Find(`[data-testid=output-unit-row]`).Length() != 1 || task.Find(`[data-testid=ledger-deviation]`).Length() == 0 {
		t.Errorf("task ledger: %q", task.Find(`[data-testid=task-ledger-outputs]`).Text())
	}
}

// TestTeamViewerSeesTheRoundButOutsidersDoNot: a viewer of the round's
// team reads it without the form; someone of no team of the round's — as
// viewer, member or manager — finds neither the round nor the task's ledger
// (404, as on /bookings/{id} and the API), and cannot record against it.
func TestTeamViewerSeesTheRoundButOutsidersDoNot(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	viewer := f.e.Users[store.RoleViewer]
	if _, err := f.e.St.SetMembership(ledgerActor(f.e.Users[store.RoleAdmin]), f.team.ID, viewer.ID, store.TeamRoleViewer); err != nil {
		t.Fatal(err)
	}
	c := f.e.Client()
	c.MustLogin(viewer.Username, viewer.Password)
	doc := c.Get(f.roundPath()).Doc(t)
	if doc.Find(`[data-testid=round-figures]`).Length() != 1 || doc.Find(`[data-testid=output-form]`).Length() != 0 {
		t.Error("a viewer of the team sees the form, or not the round")
	}

	taskPath := fmt.Sprintf("/ledger/tasks/%d", f.task.ID)
	for _, role := range []string{store.RoleViewer, store.RoleMember, store.RoleManager} {
		pw := "password-other-" + role
		other, err := f.e.St.CreateUser(context.Background(), store.UserCreate{Username: "t-other-" + role, Password: pw, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		c := f.e.Client()
		c.MustLogin(other.Username, pw)
		for _, p := range []string{f.roundPath(), taskPath} {
			r := c.Get(p)
			if r.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s as a %s of no team of the round's: status %d, want 404", p, role, r.StatusCode)
			}
			if strings.Contains(r.String(), "SFT 指令微调") || strings.Contains(r.String(), f.e.Users[store.RoleMember].Username) {
				t.Errorf("GET %s as a %s of another team shows the task or its booker", p, role)
			}
		}
		if role == store.RoleViewer {
			continue // below the form routes' level: the route × role test holds that
		}
		for p, v := range map[string]url.Values{
			f.roundPath() + "/outputs": {"quantity": {"1"}, "unit": {"epochs"}},
			taskPath + "/kind":         {"kind": {"eval"}},
		} {
			if r := c.PostForm(p, v, true); r.StatusCode != http.StatusNotFound {
				t.Errorf("POST %s as a %s of another team: status %d, want 404", p, role, r.StatusCode)
			}
		}
	}
}

func TestOutputAPIAndMonthlyReportExports(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	c := f.e.Client()
	member, manager := f.e.Users[store.RoleMember], f.e.Users[store.RoleManager]
	path := fmt.Sprintf("/api/v1/bookings/%d/outputs", f.booking)

	servertest.MustAPIError(t, c.APICall(http.MethodPost, path, member.Token, `{"quantity": "3", "unit": "epochs"}`), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, c.APICall(http.MethodPost, path, member.Token, `{"quantity": 3, "unit": "epochs", "extra": 1}`), http.StatusUnprocessableEntity, "invalid")
	e := servertest.MustAPIError(t, c.APICall(http.MethodPost, path, member.Token, `{"quantity": -1, "unit": ""}`), http.StatusUnprocessableEntity, "invalid")
	if e.Error.Fields["quantity"] == "" || e.Error.Fields["unit"] == "" {
		t.Errorf("fields %v, want quantity and unit", e.Error.Fields)
	}
	r := c.APICall(http.MethodPost, path, member.Token, `{"quantity": 3, "unit": "epochs", "note": "loss 1.92"}`)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("record: %d %s", r.StatusCode, r)
	}
	var out store.OutputView
	if err := json.Unmarshal(r.Body, &out); err != nil || out.Quantity != 3 || out.Unit != "epochs" {
		t.Fatalf("recorded %s (%v)", r, err)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodPost, path, member.Token, fmt.Sprintf(`{"quantity": 2, "unit": "epochs", "corrects_id": %d}`, out.ID+100)),
		http.StatusUnprocessableEntity, "invalid")
	list := c.APICall(http.MethodGet, path, member.Token, "")
	if list.StatusCode != http.StatusOK || !strings.Contains(list.String(), `"loss 1.92"`) {
		t.Errorf("history: %d %s", list.StatusCode, list)
	}

	// The report, as the team's manager.
	q := "/api/v1/reports/monthly?month=" + f.month
	js := c.APICall(http.MethodGet, q, manager.Token, "")
	var rep store.MonthlyReport
	if err := json.Unmarshal(js.Body, &rep); err != nil || js.StatusCode != http.StatusOK {
		t.Fatalf("json report: %d %v", js.StatusCode, err)
	}
	if rep.Empty || rep.Zone != "Asia/Shanghai" || len(rep.Entries) != 1 || rep.Entries[0].Note != "loss 1.92" {
		t.Errorf("report %+v", rep)
	}
	csv := c.APICall(http.MethodGet, q+"&format=csv&lang=en", manager.Token, "")
	if csv.StatusCode != http.StatusOK || !strings.HasPrefix(csv.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(csv.String(), "loss 1.92") || !strings.Contains(csv.String(), "# Output entries") {
		t.Errorf("csv: %d %s\n%.800s", csv.StatusCode, csv.Header.Get("Content-Type"), csv)
	}
	one := c.APICall(http.MethodGet, q+"&format=csv&section=entries&lang=en", manager.Token, "")
	if lines := strings.Split(strings.TrimSpace(strings.TrimPrefix(one.String(), "\uFEFF")), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "Entry,") {
		t.Errorf("one section: %q", lines)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodGet, q+"&format=csv&section=nope", manager.Token, ""), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, c.APICall(http.MethodGet, q+"&format=pdf", manager.Token, ""), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, c.APICall(http.MethodGet, "/api/v1/reports/monthly?month=2026-13", manager.Token, ""), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, c.APICall(http.MethodGet, q, member.Token, ""), http.StatusForbidden, "forbidden")

	x := c.APICall(http.MethodGet, q+"&format=xlsx&lang=en", manager.Token, "")
	if x.StatusCode != http.StatusOK {
		t.Fatalf("xlsx: %d %s", x.StatusCode, x)
	}
	book, err := excelize.OpenReader(bytes.NewReader(x.Body))
	if err != nil {
		t.Fatalf("excelize cannot read the export: %v", err)
	}
	defer book.Close()
	sheets := book.GetSheetList()
	want := []string{"Summary", "By team", "By task", "Outputs this month", "Quotas- granted and used", "Rounds that idled most",
		"Best output per cost", "Output entries", "Last six months"}
	if strings.Join(sheets, "|") != strings.Join(want, "|") {
		t.Errorf("sheets %q, want %q", sheets, want)
	}
	// Typed cells: the quantity and the cost are numbers (no t attribute, or
	// t="n"), the unit is text.
	isNumber := func(sheet, cell string) bool {
		t.Helper()
		typ, err := book.GetCellType(sheet, cell)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := book.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
		_, perr := strconv.ParseFloat(raw, 64)
		return (typ == excelize.CellTypeUnset || typ == excelize.CellTypeNumber) && perr == nil
	}
	if !isNumber("Output entries", "F2") || !isNumber("Output entries", "M2") {
		t.Error("the quantity or the round cost is not a number cell")
	}
	if typ, _ := book.GetCellType("Output entries", "G2"); typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString {
		t.Errorf("the unit cell is %v, want text", typ)
	}
	if v, _ := book.GetCellValue("Output entries", "F2", excelize.Options{RawCellValue: true}); v != "3" {
		t.Errorf("quantity cell %q, want 3", v)
	}
	summary, _ := book.GetRows("Summary")
	if len(summary) != 2 || summary[1][0] != f.month {
		t.Errorf("summary %v", summary)
	}
	if !isNumber("Summary", "I2") || !isNumber("Summary", "D2") {
		t.Error("the summary's cost or booked card-hours is not a number cell")
	}
}

func TestMonthlyReportPageAndItsScope(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	q := 2.5
	if _, err := f.e.St.RecordOutput(ledgerActor(f.e.Users[store.RoleMember]), f.e.Cfg.TZ, f.booking, store.OutputInput{Quantity: &q, Unit: "epochs", Note: "第一轮"}); err != nil {
		t.Fatal(err)
	}
	manager := f.e.Client()
	manager.MustLogin(f.e.Users[store.RoleManager].Username, f.e.Users[store.RoleManager].Password)
	if r := manager.Get("/reports"); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/reports/monthly" {
		t.Errorf("/reports for a manager: %d → %q", r.StatusCode, r.Header.Get("Location"))
	}
	page := manager.Get("/reports/monthly")
	doc := page.Doc(t)
	if page.StatusCode != http.StatusOK || doc.Find(`[data-testid=report-empty]`).Length() != 0 {
		t.Fatalf("this month's report: %d, empty %d", page.StatusCode, doc.Find(`[data-testid=report-empty]`).Length())
	}
	if doc.Find(`[data-testid=report-entry]`).Length() != 1 || strings.TrimSpace(doc.Find(`[data-testid=entry-note]`).Text()) != "第一轮" {
		t.Errorf("entries: %q", doc.Find(`[data-testid=report-entries]`).Text())
	}
	if doc.Find(`[data-testid=chart-teams] svg rect`).Length() == 0 || doc.Find(`[data-testid=chart-trend] svg rect`).Length() == 0 {
		t.Error("the charts have no bars")
	}
	if !strings.Contains(doc.Find(`[data-testid=report-meta]`).Text(), "Asia/Shanghai") {
		t.Errorf("the report does not name its zone: %q", doc.Find(`[data-testid=report-meta]`).Text())
	}
	if href, _ := doc.Find(`[data-testid=export-csv]`).Attr("href"); !strings.Contains(href, "format=csv") {
		t.Errorf("csv link %q", href)
	}
	empty := manager.Get("/reports/monthly?month=2020-01").Doc(t)
	if empty.Find(`[data-testid=report-empty]`).Length() != 1 {
		t.Error("an empty month does not say so")
	}
	bad := manager.Get("/reports/monthly?month=soon").Doc(t)
	if !strings.Contains(bad.Find(`[data-testid=flash]`).Text(), "YYYY-MM") {
		t.Errorf("a bad month is not reported: %q", bad.Find(`[data-testid=flash]`).Text())
	}
	year := manager.Get("/reports/yearly")
	if year.StatusCode != http.StatusOK || year.Doc(t).Find(`[data-testid=report-baseline-row]`).Length() != 1 {
		t.Errorf("yearly: %d, %d baseline rows", year.StatusCode, year.Doc(t).Find(`[data-testid=report-baseline-row]`).Length())
	}

	// Another manager sees nothing of this team; members are told where to look.
	other, err := f.e.St.CreateUser(context.Background(), store.UserCreate{Username: "t-boss2", Password: "password-boss2", Role: store.RoleManager})
	if err != nil {
		t.Fatal(err)
	}
	c2 := f.e.Client()
	c2.MustLogin(other.Username, "password-boss2")
	if d := c2.Get("/reports/monthly").Doc(t); d.Find(`[data-testid=report-empty]`).Length() != 1 || d.Find(`[data-testid=report-entry]`).Length() != 0 {
		t.Error("a manager of no team sees another team's month")
	}
	member := f.e.Client()
	member.MustLogin(f.e.Users[store.RoleMember].Username, f.e.Users[store.RoleMember].Password)
	if d := member.Get("/reports").Doc(t); d.Find(`[data-testid=reports-managers-only]`).Length() != 1 {
		t.Error("a member at /reports is not told that reports are for managers")
	}
}

// TestLedgerOpensOnTheLatestMonthWithRounds: without ?month= the ledger and
// the monthly report open on the latest month in which a round ended, not
// on an empty current month; with no rounds at all, on this month.
func TestLedgerOpensOnTheLatestMonthWithRounds(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.Options{Demo: true})
	zone := e.Cfg.TZ.String()
	this := store.MonthOf(time.Now(), e.Cfg.TZ)
	// The demo's months were cut in UTC; the portal shows its own zone.
	if _, err := e.St.SettleLedger(context.Background(), store.LedgerPassOptions{Zone: e.Cfg.TZ}); err != nil {
		t.Fatal(err)
	}
	// Leave the demo's rounds of the earlier months only: this month and
	// the one before have none.
	if _, err := e.St.DB().Exec("DELETE FROM ledger_round_months WHERE zone = ? AND month >= ?", zone, store.AddMonths(this, -1)); err != nil {
		t.Fatal(err)
	}
	var want string
	if err := e.St.DB().QueryRow("SELECT MAX(month) FROM ledger_round_months WHERE zone = ? AND is_end_month = ?", zone, true).Scan(&want); err != nil || want == "" {
		t.Fatalf("the demo has no round in an earlier month (%v)", err)
	}
	admin := e.Client()
	admin.MustLogin("admin", servertest.AdminPassword)
	for _, path := range []string{"/ledger", "/reports/monthly"} {
		doc := admin.Get(path).Doc(t)
		if got, _ := doc.Find(`input[name=month]`).Attr("value"); got != want {
			t.Errorf("%s opens on %q, want %q (the latest month with rounds; this month is %s)", path, got, want, this)
		}
	}
	if _, err := e.St.DB().Exec("DELETE FROM ledger_round_months"); err != nil {
		t.Fatal(err)
	}
	if got, _ := admin.Get("/ledger").Doc(t).Find(`input[name=month]`).Attr("value"); got != this {
		t.Errorf("with no rounds the ledger opens on %q, want this month %q", got, this)
	}
}
