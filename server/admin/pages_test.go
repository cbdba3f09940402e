package admin_test

// Tests of the admin pages and JSON API for hosts, cards, images, teams,
// users and the audit log. They use the shared harness in helpers_test.go
// (newEnv, client) and look at pages through their data-testid attributes.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
)

// api sends a JSON request with the bearer token of role and decodes the
// answer into out when out is not nil.
func (e *env) admAPI(role, method, path, body string, out any) servertest.Response {
	e.T.Helper()
	var r io.Reader
	h := http.Header{"Authorization": {"Bearer " + e.Users[role].Token}, "Accept": {"application/json"}}
	if body != "" {
		r = strings.NewReader(body)
		h.Set("Content-Type", "application/json")
	}
	res := e.Client().Do(method, path, r, h)
	if out != nil && res.StatusCode < 300 && res.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(res.Body, out); err != nil {
			e.T.Fatalf("%s %s: decode %T: %v\n%s", method, path, out, err, res)
		}
	}
	return res
}

// admAPIError is the JSON error body.
type admAPIError struct {
	Error struct {
		Code    string            `json:"code"`
		Message string            `json:"message"`
		Fields  map[string]string `json:"fields"`
	} `json:"error"`
}

func admDecodeErr(t *testing.T, r servertest.Response) admAPIError {
	t.Helper()
	var e admAPIError
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("error body is not JSON: %v\n%s", err, r)
	}
	return e
}

func admWantStatus(t *testing.T, r servertest.Response, want int, what string) {
	t.Helper()
	if r.StatusCode != want {
		t.Fatalf("%s: status %d, want %d\n%.1500s", what, r.StatusCode, want, r)
	}
}

func (e *env) admCardType(name string) *store.CardType {
	e.T.Helper()
	ct, err := e.St.CreateCardType(context.Background(), store.CardTypeInput{Name: name, VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 2200})
	if err != nil {
		e.T.Fatalf("CreateCardType: %v", err)
	}
	return ct
}

func (e *env) admHost(name string) *store.Host {
	e.T.Helper()
	h, err := e.St.CreateHost(context.Background(), store.HostInput{Name: name, Zone: "华北2-可用区A"})
	if err != nil {
		e.T.Fatalf("CreateHost: %v", err)
	}
	return h
}

func (e *env) admCard(hostID, typeID int64, index int) *store.Card {
	e.T.Helper()
	c, err := e.St.CreateCard(context.Background(), store.CardInput{UUID: fmt.Sprintf("GPU-%08d-aaaa-bbbb-cccc", index),
		GPUIndex: index, HostID: hostID, CardTypeID: typeID})
	if err != nil {
		e.T.Fatalf("CreateCard: %v", err)
	}
	return c
}

func TestAdminPagesRenderForAdmin(t *testing.T) {
	e := newEnv(t, servertest.Options{Demo: true})
	c := e.LoggedIn(store.RoleAdmin)
	for path, testid := range map[string]string{
		"/admin/hosts":    "hosts-table",
		"/admin/hosts/1":  "host-form",
		"/admin/cards":    "cards-table",
		"/admin/cards/1":  "card-form",
		"/admin/images":   "images-table",
		"/admin/images/1": "image-form",
		"/admin/teams":    "teams-table",
		"/admin/teams/1":  "members-table",
		"/admin/users":    "users-table",
		"/admin/users/1":  "user-form",
		"/admin/audit":    "audit-table",
	} {
		r := c.Get(path)
		admWantStatus(t, r, http.StatusOK, "GET "+path)
		if r.Doc(t).Find(`[data-testid="`+testid+`"]`).Length() != 1 {
			t.Errorf("GET %s: no %s", path, testid)
		}
	}
	doc := c.Get("/admin/hosts").Doc(t)
	if n := doc.Find(`[data-testid=host-row]`).Length(); n != 5 {
		t.Errorf("hosts page: %d host rows, want the 5 demo hosts", n)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid=host-row]`).First().Find("td").Eq(2).Text()); got != "8" {
		t.Errorf("first demo host shows %q cards, want 8", got)
	}
	doc = c.Get("/admin/teams").Doc(t)
	if got := strings.TrimSpace(doc.Find(`[data-testid=team-row] [data-testid=team-members]`).First().Text()); got != "2" {
		t.Errorf("first demo team shows %q members, want 2", got)
	}
}

func TestAdminCardsPageFilters(t *testing.T) {
	e := newEnv(t, servertest.Options{Demo: true})
	c := e.LoggedIn(store.RoleAdmin)
	all := c.Get("/admin/cards").Doc(t).Find(`[data-testid=card-row]`).Length()
	if all != 32 {
		t.Fatalf("cards page: %d rows, want the 32 demo cards", all)
	}
	r := c.Get("/admin/cards?status=maintenance")
	rows := r.Doc(t).Find(`[data-testid=card-row]`)
	if rows.Length() != 1 || rows.AttrOr("data-status", "") != "maintenance" {
		t.Errorf("status filter: %d rows (first %q), want the one card in maintenance", rows.Length(), rows.AttrOr("data-status", ""))
	}
	if v, _ := r.Doc(t).Find(`#filter-status option[selected]`).Attr("value"); v != "maintenance" {
		t.Errorf("status filter select shows %q, want maintenance kept selected", v)
	}
	h, err := e.St.FindCards(context.Background(), store.CardFilter{})
	if err != nil {
		t.Fatal(err)
	}
	n := c.Get("/admin/cards?host_id=" + strconv.FormatInt(h[0].HostID, 10)).Doc(t).Find(`[data-testid=card-row]`).Length()
	if n == 0 || n == all {
		t.Errorf("host filter: %d rows, want only the cards of one host", n)
	}
}

func TestAdminHostAPI(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	var h struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Zone  string `json:"zone"`
		Cards int    `json:"cards"`
	}
	r := e.admAPI("admin", http.MethodPost, "/api/v1/hosts", `{"name":"gpu-bj-01","zone":"华北2"}`, &h)
	admWantStatus(t, r, http.StatusCreated, "create host")
	if h.ID == 0 || h.Name != "gpu-bj-01" || h.Zone != "华北2" {
		t.Fatalf("created host = %+v", h)
	}

	var list struct {
		Hosts []struct {
			Name  string `json:"name"`
			Cards int    `json:"cards"`
		} `json:"hosts"`
	}
	admWantStatus(t, e.admAPI("viewer", http.MethodGet, "/api/v1/hosts", "", &list), http.StatusOK, "viewer lists hosts")
	if len(list.Hosts) != 1 || list.Hosts[0].Name != "gpu-bj-01" {
		t.Errorf("hosts = %+v", list.Hosts)
	}
	admWantStatus(t, e.admAPI("manager", http.MethodPost, "/api/v1/hosts", `{"name":"x"}`, nil), http.StatusForbidden, "manager creates host")

	before := e.AuditTotal()
	r = e.admAPI("admin", http.MethodPost, "/api/v1/hosts", `{"name":"bad name!","zone":"z"}`, nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "invalid host name")
	if er := admDecodeErr(t, r); er.Error.Code != "invalid" || er.Error.Fields["name"] == "" {
		t.Errorf("invalid host: error = %+v, want code invalid with a message for name", er.Error)
	}
	r = e.admAPI("admin", http.MethodPost, "/api/v1/hosts", `{"name":"GPU-BJ-01"}`, nil)
	admWantStatus(t, r, http.StatusConflict, "duplicate host name")
	if er := admDecodeErr(t, r); er.Error.Fields["name"] == "" {
		t.Errorf("duplicate host: error = %+v, want a message for name", er.Error)
	}
	admWantStatus(t, e.admAPI("admin", http.MethodPost, "/api/v1/hosts", `{"name":"a","typo":1}`, nil), http.StatusUnprocessableEntity, "unknown JSON field")
	if after := e.AuditTotal(); after != before {
		t.Errorf("refused requests wrote %d audit entries", after-before)
	}
	hosts, _ := e.St.FindHosts(context.Background())
	if len(hosts) != 1 {
		t.Errorf("%d hosts after refused creates, want 1", len(hosts))
	}

	id := strconv.FormatInt(h.ID, 10)
	admWantStatus(t, e.admAPI("admin", http.MethodPut, "/api/v1/hosts/"+id, `{"name":"gpu-bj-02","zone":"华北2"}`, &h), http.StatusOK, "update host")
	if h.Name != "gpu-bj-02" {
		t.Errorf("updated name = %q", h.Name)
	}
	ct := e.admCardType("NVIDIA H800 80GB")
	e.admCard(h.ID, ct.ID, 0)
	r = e.admAPI("admin", http.MethodDelete, "/api/v1/hosts/"+id, "", nil)
	admWantStatus(t, r, http.StatusConflict, "delete host with cards")
	admWantStatus(t, e.admAPI("viewer", http.MethodGet, "/api/v1/hosts/"+id, "", &h), http.StatusOK, "get host")
	if h.Cards != 1 {
		t.Errorf("host cards = %d, want 1", h.Cards)
	}
	admWantStatus(t, e.admAPI("viewer", http.MethodGet, "/api/v1/hosts/999", "", nil), http.StatusNotFound, "get missing host")
}

func TestAdminHostPageFormErrorsAndPRG(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	c := e.LoggedIn(store.RoleAdmin)
	before := e.AuditTotal()
	r := c.PostForm("/admin/hosts", url.Values{"name": {"no spaces allowed"}, "zone": {"z"}}, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "bad host form")
	doc := r.Doc(t)
	if doc.Find(`[data-testid=form-error]`).Length() != 1 || doc.Find(`[data-testid=error-name]`).Length() != 1 {
		t.Errorf("bad host form: want the form alert and an inline message for name:\n%s", r)
	}
	if v, _ := doc.Find(`[data-testid=host-form] input[name=name]`).Attr("value"); v != "no spaces allowed" {
		t.Errorf("bad host form: name input = %q, want the submitted value kept", v)
	}
	if e.AuditTotal() != before {
		t.Error("a refused form wrote to the audit log")
	}

	r = c.PostForm("/admin/hosts", url.Values{"name": {"gpu-sh-01"}, "zone": {"华东1"}}, true)
	admWantStatus(t, r, http.StatusSeeOther, "good host form")
	if loc := r.Header.Get("Location"); loc != "/admin/hosts" {
		t.Errorf("redirect to %q", loc)
	}
	page := c.Get("/admin/hosts").Doc(t)
	if !strings.Contains(page.Find(`[data-testid=flash]`).Text(), "gpu-sh-01") {
		t.Error("no flash naming the created host")
	}
	if page.Find(`[data-testid=host-row]`).Length() != 1 {
		t.Error("the created host is not listed")
	}

	// A second host by the same name (any case) is a 409 on the form.
	r = c.PostForm("/admin/hosts", url.Values{"name": {"GPU-SH-01"}}, true)
	admWantStatus(t, r, http.StatusConflict, "duplicate host form")
	if r.Doc(t).Find(`[data-testid=error-name]`).Length() != 1 {
		t.Error("duplicate host: no inline message for name")
	}
}

func TestAdminCardAPIResolvesNames(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	h := e.admHost("gpu-gz-01")
	ct := e.admCardType("NVIDIA L40S 48GB")
	var cd struct {
		ID         int64  `json:"id"`
		HostID     int64  `json:"host_id"`
		CardTypeID int64  `json:"card_type_id"`
		Host       string `json:"host"`
		CardType   string `json:"card_type"`
		Status     string `json:"status"`
		UUID       string `json:"uuid"`
	}
	r := e.admAPI("admin", http.MethodPost, "/api/v1/cards",
		`{"uuid":"GPU-5a3c1f00-1111-2222-3333-444455556666","index":0,"host":"gpu-gz-01","card_type":"NVIDIA L40S 48GB"}`, &cd)
	admWantStatus(t, r, http.StatusCreated, "create card by names")
	if cd.HostID != h.ID || cd.CardTypeID != ct.ID || cd.Host != "gpu-gz-01" || cd.CardType != "NVIDIA L40S 48GB" || cd.Status != "active" {
		t.Errorf("created card = %+v", cd)
	}

	before := e.AuditTotal()
	r = e.admAPI("admin", http.MethodPost, "/api/v1/cards", `{"uuid":"GPU-5a3c1f00-1111-2222-3333-000000000000","index":1,"host":"nope","card_type":"nope either"}`, nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "unknown names")
	er := admDecodeErr(t, r)
	if er.Error.Fields["host"] == "" || er.Error.Fields["card_type"] == "" {
		t.Errorf("unknown names: fields = %v, want messages for host and card_type", er.Error.Fields)
	}
	r = e.admAPI("admin", http.MethodPost, "/api/v1/cards", `{"uuid":"not-a-uuid","index":1,"host_id":`+strconv.FormatInt(h.ID, 10)+`,"card_type_id":`+strconv.FormatInt(ct.ID, 10)+`}`, nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "bad uuid")
	if er := admDecodeErr(t, r); er.Error.Fields["uuid"] == "" {
		t.Errorf("bad uuid: fields = %v", er.Error.Fields)
	}
	if e.AuditTotal() != before {
		t.Error("refused card requests wrote to the audit log")
	}

	var list struct {
		Cards []struct {
			ID int64 `json:"id"`
		} `json:"cards"`
	}
	admWantStatus(t, e.admAPI("viewer", http.MethodGet, "/api/v1/cards?host_id="+strconv.FormatInt(h.ID, 10)+"&status=active", "", &list), http.StatusOK, "filtered list")
	if len(list.Cards) != 1 || list.Cards[0].ID != cd.ID {
		t.Errorf("filtered cards = %+v", list.Cards)
	}
	admWantStatus(t, e.admAPI("viewer", http.MethodGet, "/api/v1/cards?status=retired", "", &list), http.StatusOK, "empty list")
	if list.Cards == nil || len(list.Cards) != 0 {
		t.Errorf("retired cards = %+v, want an empty list", list.Cards)
	}
	admWantStatus(t, e.admAPI("viewer", http.MethodGet, "/api/v1/cards?status=broken", "", nil), http.StatusUnprocessableEntity, "bad status filter")

	id := strconv.FormatInt(cd.ID, 10)
	r = e.admAPI("admin", http.MethodPut, "/api/v1/cards/"+id, `{"uuid":"`+cd.UUID+`","index":3,"host":"gpu-gz-01","card_type_id":`+strconv.FormatInt(ct.ID, 10)+`,"status":"maintenance"}`, &cd)
	admWantStatus(t, r, http.StatusOK, "update card")
	if cd.Status != "maintenance" {
		t.Errorf("updated status = %q", cd.Status)
	}
}

// TestCardInUseCanOnlyBeRetired gives a card a row that refers to it, the
// way a booking will, and checks that delete is refused and retire works.
func TestAdminCardInUseCanOnlyBeRetired(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	h := e.admHost("gpu-bj-01")
	ct := e.admCardType("NVIDIA H800 80GB")
	cd := e.admCard(h.ID, ct.ID, 0)
	free := e.admCard(h.ID, ct.ID, 1)
	db := e.St.DB()
	if _, err := db.Exec(`CREATE TABLE test_card_refs (id INTEGER PRIMARY KEY, card_id BIGINT NOT NULL REFERENCES cards (id))`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO test_card_refs (card_id) VALUES (?)`, cd.ID); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(cd.ID, 10)

	c := e.LoggedIn(store.RoleAdmin)
	r := c.PostForm("/admin/cards/"+id+"/delete", nil, true)
	admWantStatus(t, r, http.StatusConflict, "delete card in use (page)")
	if msg := r.Doc(t).Find(`[data-testid=list-error]`).Text(); !strings.Contains(msg, "退役") {
		t.Errorf("delete card in use: list alert %q, want the has-bookings message", msg)
	}
	r = e.admAPI("admin", http.MethodDelete, "/api/v1/cards/"+id, "", nil)
	admWantStatus(t, r, http.StatusConflict, "delete card in use (API)")
	if er := admDecodeErr(t, r); er.Error.Code != "conflict" {
		t.Errorf("delete card in use: code %q", er.Error.Code)
	}

	r = c.PostForm("/admin/cards/"+id+"/retire", nil, true)
	admWantStatus(t, r, http.StatusSeeOther, "retire card")
	got, err := e.St.FindCardByID(context.Background(), cd.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.CardRetired {
		t.Errorf("status after retire = %q", got.Status)
	}
	row := c.Get("/admin/cards").Doc(t).Find(`[data-testid=card-row][data-id="` + id + `"]`)
	if row.AttrOr("data-status", "") != "retired" || row.Find(`[data-testid=card-retire]`).Length() != 0 {
		t.Error("a retired card is not shown as retired, or still offers retire")
	}

	admWantStatus(t, c.PostForm("/admin/cards/"+strconv.FormatInt(free.ID, 10)+"/delete", nil, true), http.StatusSeeOther, "delete free card")
	if _, err := e.St.FindCardByID(context.Background(), free.ID); err == nil {
		t.Error("the free card was not deleted")
	}
}

// TestAdminFaultyCardEditKeepsTheFault: the edit page of a faulty card
// offers its fault status, saving a new index keeps the fault, and asking
// for another status, on the page, in the API or by retiring, is refused
// with a message that points at Clear fault.
func TestAdminFaultyCardEditKeepsTheFault(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	h := e.admHost("gpu-bj-01")
	ct := e.admCardType("NVIDIA H800 80GB")
	cd := e.admCard(h.ID, ct.ID, 0)
	ctx := context.Background()
	if changed, err := e.St.MarkCardFault(ctx, cd.ID, "GPU requires reset", time.Now()); err != nil || !changed {
		t.Fatalf("mark fault: %v %v", changed, err)
	}
	id := strconv.FormatInt(cd.ID, 10)
	c := e.LoggedIn(store.RoleAdmin)
	if v, _ := c.Get("/admin/cards/" + id).Doc(t).Find(`#f-status option[selected]`).Attr("value"); v != store.CardFault {
		t.Errorf("edit page of a faulty card: status select = %q, want fault", v)
	}
	form := url.Values{"uuid": {cd.UUID}, "index": {"5"}, "host_id": {strconv.FormatInt(h.ID, 10)},
		"card_type_id": {strconv.FormatInt(ct.ID, 10)}, "status": {store.CardFault}}
	admWantStatus(t, c.PostForm("/admin/cards/"+id, form, true), http.StatusSeeOther, "save a faulty card's index")
	if got, err := e.St.FindCardByID(ctx, cd.ID); err != nil || got.Status != store.CardFault || got.GPUIndex != 5 || got.FaultReason == "" {
		t.Fatalf("after saving the index: %+v %v", got, err)
	}

	form.Set("status", store.CardActive)
	r := c.PostForm("/admin/cards/"+id, form, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "set a faulty card active (page)")
	doc := r.Doc(t)
	if msg := doc.Find(`[data-testid=error-status]`).Text(); !strings.Contains(msg, "排除故障") {
		t.Errorf("set a faulty card active: status message %q, want one pointing at Clear fault", msg)
	}
	if doc.Find(`#f-status option[value=fault]`).Length() != 1 {
		t.Error("the refused form no longer offers the fault status")
	}
	body := `{"uuid":"` + cd.UUID + `","index":5,"host_id":` + strconv.FormatInt(h.ID, 10) + `,"card_type_id":` + strconv.FormatInt(ct.ID, 10) + `,"status":"active"}`
	r = e.admAPI("admin", http.MethodPut, "/api/v1/cards/"+id, body, nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "set a faulty card active (API)")
	if er := admDecodeErr(t, r); !strings.Contains(er.Error.Fields["status"], "排除故障") {
		t.Errorf("set a faulty card active (API): fields %v", er.Error.Fields)
	}
	if got, err := e.St.FindCardByID(ctx, cd.ID); err != nil || got.Status != store.CardFault {
		t.Errorf("after the refused edits: %+v %v", got, err)
	}
	row := c.Get("/admin/cards?status=").Doc(t).Find(`[data-testid=card-row][data-id="` + id + `"]`)
	if row.Find(`[data-testid=card-retire]`).Length() != 1 || row.Find(`[data-testid=card-clear-fault]`).Length() != 1 {
		t.Error("a faulty card's row does not offer retire and clear fault")
	}
	// The list filters by fault, on the page and in the API.
	if rows := c.Get("/admin/cards?status=fault").Doc(t).Find(`[data-testid=card-row]`); rows.Length() != 1 || rows.AttrOr("data-id", "") != id {
		t.Errorf("the fault filter lists %d rows", rows.Length())
	}
	r = e.admAPI("admin", http.MethodGet, "/api/v1/cards?status=fault", "", nil)
	admWantStatus(t, r, http.StatusOK, "list the faulty cards (API)")
	if !strings.Contains(r.String(), cd.UUID) {
		t.Errorf("the API's fault filter lacks the card: %s", r)
	}
	// A dead card is retired as it is, never bookable on the way.
	admWantStatus(t, c.PostForm("/admin/cards/"+id+"/retire", nil, true), http.StatusSeeOther, "retire a faulty card")
	if got, err := e.St.FindCardByID(ctx, cd.ID); err != nil || got.Status != store.CardRetired || got.FaultReason != "" {
		t.Errorf("after retiring the faulty card: %+v %v", got, err)
	}
}

func TestAdminCardFormReportsBadNumbers(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	h := e.admHost("gpu-bj-01")
	c := e.LoggedIn(store.RoleAdmin)
	r := c.PostForm("/admin/cards", url.Values{"uuid": {"GPU-x"}, "index": {"first"}, "host_id": {strconv.FormatInt(h.ID, 10)}, "card_type_id": {""}, "status": {"active"}}, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "bad card form")
	doc := r.Doc(t)
	for _, f := range []string{"index", "card_type_id"} {
		if doc.Find(`[data-testid=error-`+f+`]`).Length() != 1 {
			t.Errorf("bad card form: no inline message for %s", f)
		}
	}
	if v, _ := doc.Find(`#f-host_id option[selected]`).Attr("value"); v != strconv.FormatInt(h.ID, 10) {
		t.Errorf("bad card form: host select = %q, want the chosen host kept", v)
	}
}

func TestAdminImageAPIAndPage(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	var img struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	admWantStatus(t, e.admAPI("admin", http.MethodPost, "/api/v1/images", `{"name":"vllm","reference":"registry.example.cn/vllm:0.6","cuda_version":"12.4"}`, &img), http.StatusCreated, "create image")
	r := e.admAPI("admin", http.MethodPost, "/api/v1/images", `{"name":"x","reference":"has space"}`, nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "bad reference")
	if er := admDecodeErr(t, r); er.Error.Fields["reference"] == "" {
		t.Errorf("bad reference: fields = %v", er.Error.Fields)
	}
	c := e.LoggedIn(store.RoleAdmin)
	id := strconv.FormatInt(img.ID, 10)
	r = c.PostForm("/admin/images/"+id, url.Values{"name": {""}, "reference": {"registry.example.cn/vllm:0.7"}}, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "image edit without name")
	if r.Doc(t).Find(`[data-testid=error-name]`).Length() != 1 {
		t.Error("image edit: no inline message for name")
	}
	admWantStatus(t, c.PostForm("/admin/images/"+id+"/delete", nil, true), http.StatusSeeOther, "delete image")
	admWantStatus(t, e.admAPI("viewer", http.MethodGet, "/api/v1/images/"+id, "", nil), http.StatusNotFound, "deleted image")
}

func TestAdminTeamMembership(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	c := e.LoggedIn(store.RoleAdmin)
	r := c.PostForm("/admin/teams", url.Values{"name": {"大模型组"}, "description": {"LLM"}}, true)
	admWantStatus(t, r, http.StatusSeeOther, "create team")
	teams, _ := e.St.FindTeams(context.Background())
	if len(teams) != 1 {
		t.Fatalf("%d teams", len(teams))
	}
	tid := strconv.FormatInt(teams[0].ID, 10)
	if loc := r.Header.Get("Location"); loc != "/admin/teams/"+tid {
		t.Errorf("after create, redirect to %q, want the team page to add members", loc)
	}
	member := e.Users["member"]
	uid := strconv.FormatInt(member.ID, 10)

	r = c.PostForm("/admin/teams/"+tid+"/members", url.Values{"user_id": {""}, "role": {"member"}}, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "add member without user")
	if r.Doc(t).Find(`[data-testid=error-user_id]`).Length() != 1 {
		t.Error("add member without user: no inline message")
	}
	admWantStatus(t, c.PostForm("/admin/teams/"+tid+"/members", url.Values{"user_id": {uid}, "role": {"member"}}, true), http.StatusSeeOther, "add member")
	doc := c.Get("/admin/teams/" + tid).Doc(t)
	row := doc.Find(`[data-testid=member-row][data-user-id="` + uid + `"]`)
	if row.AttrOr("data-role", "") != "member" {
		t.Fatalf("member row role = %q", row.AttrOr("data-role", ""))
	}
	if doc.Find(`#f-user_id option[value="`+uid+`"]`).Length() != 0 {
		t.Error("a member is still offered in the add-member select")
	}

	admWantStatus(t, c.PostForm("/admin/teams/"+tid+"/members/"+uid, url.Values{"role": {"manager"}}, true), http.StatusSeeOther, "change role")
	r = c.PostForm("/admin/teams/"+tid+"/members/"+uid, url.Values{"role": {"owner"}}, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "invalid role (page)")
	if r.Doc(t).Find(`[data-testid=list-error]`).Length() != 1 {
		t.Error("invalid role: no alert on the members list")
	}

	var members struct {
		Members []struct {
			UserID   int64  `json:"user_id"`
			Username string `json:"username"`
			Role     string `json:"role"`
		} `json:"members"`
	}
	admWantStatus(t, e.admAPI("admin", http.MethodGet, "/api/v1/teams/"+tid+"/members", "", &members), http.StatusOK, "list members")
	if len(members.Members) != 1 || members.Members[0].Role != "manager" || members.Members[0].Username != member.Username {
		t.Errorf("members = %+v", members.Members)
	}
	viewer := strconv.FormatInt(e.Users["viewer"].ID, 10)
	r = e.admAPI("admin", http.MethodPut, "/api/v1/teams/"+tid+"/members/"+viewer, `{"role":"boss"}`, nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "invalid role (API)")
	if er := admDecodeErr(t, r); er.Error.Fields["role"] == "" {
		t.Errorf("invalid role: fields = %v", er.Error.Fields)
	}
	admWantStatus(t, e.admAPI("admin", http.MethodPut, "/api/v1/teams/"+tid+"/members/"+viewer, `{"role":"viewer"}`, nil), http.StatusOK, "add viewer (API)")
	admWantStatus(t, e.admAPI("manager", http.MethodGet, "/api/v1/teams/"+tid+"/members", "", nil), http.StatusForbidden, "manager lists members")
	var team struct {
		Members int `json:"members"`
	}
	admWantStatus(t, e.admAPI("admin", http.MethodGet, "/api/v1/teams/"+tid, "", &team), http.StatusOK, "get team")
	if team.Members != 2 {
		t.Errorf("team members = %d, want 2", team.Members)
	}
	admWantStatus(t, e.admAPI("admin", http.MethodDelete, "/api/v1/teams/"+tid+"/members/"+viewer, "", nil), http.StatusNoContent, "remove member (API)")
	admWantStatus(t, c.PostForm("/admin/teams/"+tid+"/members/"+uid+"/delete", nil, true), http.StatusSeeOther, "remove member (page)")
	admWantStatus(t, e.admAPI("admin", http.MethodDelete, "/api/v1/teams/"+tid+"/members/"+uid, "", nil), http.StatusNotFound, "remove non-member")
	admWantStatus(t, e.admAPI("admin", http.MethodGet, "/api/v1/teams/999/members", "", nil), http.StatusNotFound, "members of missing team")
}

func TestAdminLastAdminCannotBeDemoted(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	admin := e.Users["admin"]
	id := strconv.FormatInt(admin.ID, 10)
	before := e.AuditTotal()
	r := e.admAPI("admin", http.MethodPatch, "/api/v1/users/"+id, `{"role":"member"}`, nil)
	admWantStatus(t, r, http.StatusConflict, "demote last admin (API)")
	if er := admDecodeErr(t, r); er.Error.Code != "conflict" || er.Error.Message == "" {
		t.Errorf("demote last admin: error = %+v", er.Error)
	}
	if e.AuditTotal() != before {
		t.Error("a refused demotion (API) wrote to the audit log")
	}
	c := e.LoggedIn(store.RoleAdmin)
	before = e.AuditTotal() // the login itself is audited
	r = c.PostForm("/admin/users/"+id, url.Values{"display_name": {"A"}, "email": {""}, "role": {"admin"}, "disabled": {"true"}, "password": {""}}, true)
	admWantStatus(t, r, http.StatusConflict, "disable last admin (page)")
	if r.Doc(t).Find(`[data-testid=form-error]`).Length() != 1 {
		t.Error("disable last admin: no form alert")
	}
	if e.AuditTotal() != before {
		t.Error("a refused demotion wrote to the audit log")
	}
	u, err := e.St.FindUserByID(context.Background(), admin.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Role != store.RoleAdmin || u.Disabled {
		t.Errorf("admin after refused changes: role %q disabled %v", u.Role, u.Disabled)
	}

	// With a second admin the first may step down.
	other := strconv.FormatInt(e.Users["manager"].ID, 10)
	admWantStatus(t, e.admAPI("admin", http.MethodPatch, "/api/v1/users/"+other, `{"role":"admin"}`, nil), http.StatusOK, "promote manager")
	admWantStatus(t, e.admAPI("admin", http.MethodPatch, "/api/v1/users/"+id, `{"role":"member"}`, nil), http.StatusOK, "demote with another admin")
}

func TestAdminUserAPIAndPages(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	var u struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
		Role     string `json:"role"`
		Teams    []any  `json:"teams"`
	}
	r := e.admAPI("admin", http.MethodPost, "/api/v1/users", `{"username":"lihua","display_name":"李华","password":"long-enough-1","role":"member"}`, &u)
	admWantStatus(t, r, http.StatusCreated, "create user")
	if u.Username != "lihua" || u.Teams == nil {
		t.Errorf("created user = %+v", u)
	}
	for _, bad := range []string{r.String(), e.admAPI("admin", http.MethodGet, "/api/v1/users", "", nil).String()} {
		if strings.Contains(bad, "password_hash") || strings.Contains(bad, "$2a$") {
			t.Fatalf("a password hash reached the API:\n%s", bad)
		}
	}
	r = e.admAPI("admin", http.MethodPost, "/api/v1/users", `{"username":"LiHua","password":"long-enough-1"}`, nil)
	admWantStatus(t, r, http.StatusConflict, "duplicate username")
	r = e.admAPI("admin", http.MethodPost, "/api/v1/users", `{"username":"x","password":"short","email":"nope"}`, nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "bad user")
	if er := admDecodeErr(t, r); er.Error.Fields["username"] == "" || er.Error.Fields["password"] == "" || er.Error.Fields["email"] == "" {
		t.Errorf("bad user: fields = %v", er.Error.Fields)
	}
	admWantStatus(t, e.admAPI("manager", http.MethodGet, "/api/v1/users", "", nil), http.StatusForbidden, "manager lists users")

	c := e.LoggedIn(store.RoleAdmin)
	r = c.PostForm("/admin/users", url.Values{"username": {"zhangwei"}, "password": {"short"}, "role": {"member"}}, true)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "short password (page)")
	doc := r.Doc(t)
	if doc.Find(`[data-testid=error-password]`).Length() != 1 {
		t.Error("short password: no inline message")
	}
	if v := doc.Find(`[data-testid=user-form] input[name=password]`).AttrOr("value", ""); v != "" {
		t.Errorf("the rejected password was sent back in the page: %q", v)
	}
	admWantStatus(t, c.PostForm("/admin/users", url.Values{"username": {"zhangwei"}, "password": {"long-enough-2"}, "role": {"viewer"}}, true), http.StatusSeeOther, "create user (page)")
	zw, err := e.St.FindUserByUsername(context.Background(), "zhangwei")
	if err != nil {
		t.Fatal(err)
	}
	zid := strconv.FormatInt(zw.ID, 10)
	admWantStatus(t, c.PostForm("/admin/users/"+zid, url.Values{"display_name": {"张伟"}, "email": {"zw@example.cn"}, "role": {"member"}, "disabled": {"true"}, "password": {""}}, true), http.StatusSeeOther, "edit user")
	zw, _ = e.St.FindUserByID(context.Background(), zw.ID)
	if zw.DisplayName != "张伟" || zw.Role != store.RoleMember || !zw.Disabled {
		t.Errorf("edited user = %+v", zw)
	}
	row := c.Get("/admin/users").Doc(t).Find(`[data-testid=user-row][data-username=zhangwei]`)
	if row.Find(`[data-testid=user-disabled]`).Length() != 1 {
		t.Error("a disabled user is not marked in the list")
	}

	// An admin who sets their own password stays logged in here.
	aid := strconv.FormatInt(e.Users["admin"].ID, 10)
	admWantStatus(t, c.PostForm("/admin/users/"+aid, url.Values{"display_name": {"Admin"}, "email": {""}, "role": {"admin"}, "disabled": {"false"}, "password": {"new-admin-pass-1"}}, true), http.StatusSeeOther, "own password")
	admWantStatus(t, c.Get("/admin/users"), http.StatusOK, "still logged in after own password change")
}

func TestAdminAuditPageAndAPI(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	ctx := store.WithActor(context.Background(), store.Actor{Username: "admin"})
	for i := 0; i < 55; i++ {
		if _, err := e.St.CreateHost(ctx, store.HostInput{Name: fmt.Sprintf("gpu-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	c := e.LoggedIn(store.RoleAdmin)
	r := c.Get("/admin/audit?entity=host")
	admWantStatus(t, r, http.StatusOK, "audit page 1")
	doc := r.Doc(t)
	if n := doc.Find(`[data-testid=audit-row]`).Length(); n != 50 {
		t.Errorf("page 1 has %d rows, want 50", n)
	}
	if got := doc.Find(`[data-testid=audit-row]`).First().Find("td").Eq(4).Text(); got != "gpu-54" {
		t.Errorf("first row summary = %q, want the newest entry gpu-54", got)
	}
	if doc.Find(`[data-testid=audit-details]`).First().Find("pre").Length() == 0 {
		t.Error("no before/after JSON in a details element")
	}
	next, ok := doc.Find(`[data-testid=audit-next]`).Attr("href")
	if !ok || doc.Find(`[data-testid=audit-prev]`).Length() != 0 {
		t.Fatalf("page 1: want a next link and no previous link")
	}
	doc = c.Get(next).Doc(t)
	if n := doc.Find(`[data-testid=audit-row]`).Length(); n != 5 {
		t.Errorf("page 2 (%s) has %d rows, want 5", next, n)
	}
	if doc.Find(`[data-testid=audit-next]`).Length() != 0 || doc.Find(`[data-testid=audit-prev]`).Length() != 1 {
		t.Error("page 2: want a previous link and no next link")
	}
	if doc.Find(`[data-testid=audit-row][data-entity!=host]`).Length() != 0 {
		t.Error("the entity filter let other entities through")
	}

	var out struct {
		Entries []struct {
			Entity string          `json:"entity"`
			Actor  string          `json:"actor"`
			After  json.RawMessage `json:"after"`
		} `json:"entries"`
		Total int64 `json:"total"`
	}
	admWantStatus(t, e.admAPI("admin", http.MethodGet, "/api/v1/audit?entity=host&limit=5&offset=50", "", &out), http.StatusOK, "audit API")
	if out.Total != 55 || len(out.Entries) != 5 || out.Entries[0].Actor != "admin" {
		t.Errorf("audit API: total %d, %d entries", out.Total, len(out.Entries))
	}
	if len(out.Entries) > 0 && !strings.Contains(string(out.Entries[0].After), `"name":"gpu-04"`) {
		t.Errorf("audit API: after = %s, want the created host", out.Entries[0].After)
	}
	r = e.admAPI("admin", http.MethodGet, "/api/v1/audit?limit=0&offset=-1", "", nil)
	admWantStatus(t, r, http.StatusUnprocessableEntity, "bad paging")
	if er := admDecodeErr(t, r); er.Error.Fields["limit"] == "" || er.Error.Fields["offset"] == "" {
		t.Errorf("bad paging: fields = %v", er.Error.Fields)
	}
	admWantStatus(t, e.admAPI("manager", http.MethodGet, "/api/v1/audit", "", nil), http.StatusForbidden, "manager reads audit")
}

// TestAdminDeletingACardTypeInUseSaysSoOnTheList: deleting a card type that
// cards still use is refused on the card-type list itself (409, the reason
// above the table, the type still listed), not on a full-page error.
func TestAdminDeletingACardTypeInUseSaysSoOnTheList(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	ct := e.admCardType("NVIDIA H800 80GB")
	e.admCard(e.admHost("gpu-bj-01").ID, ct.ID, 0)
	c := e.LoggedIn(store.RoleAdmin)
	r := c.PostForm("/admin/card-types/"+strconv.FormatInt(ct.ID, 10)+"/delete", url.Values{}, true)
	admWantStatus(t, r, http.StatusConflict, "delete a card type in use")
	doc := r.Doc(t)
	if doc.Find(`[data-testid=list-error]`).Length() != 1 || doc.Find(`[data-testid=cardtypes-table]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid=cardtypes-table]`).Text(), "NVIDIA H800 80GB") {
		t.Errorf("want the card-type list with the refusal above it:\n%.2000s", r)
	}
}
