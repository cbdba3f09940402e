package servertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cardhour/store"
)

// Fleet is a small world for the booking API and what builds on it: team
// "llm" (t-member a member, t-manager its manager, t-viewer a viewer),
// team "vision" with an outsider, one card type "H800" with a few cards,
// quotas for both teams, and a task of each priority class in llm plus one
// in vision.
type Fleet struct {
	E                      *Env
	C                      *Client
	Base                   time.Time // the next whole hour plus one: a future slot
	LLM, Vision            *store.Team
	CT                     *store.CardType
	Cards                  []*store.Card
	Outsider               *Account
	Normal, Core, Backfill *store.Task
	VisionTask             *store.Task
	Quota                  *store.Quota
}

// NewFleet builds the world on a new portal.
func NewFleet(t *testing.T, o Options, cards int, quotaHours float64) *Fleet {
	t.Helper()
	e := New(t, o)
	f := &Fleet{E: e, C: e.Client()}
	ctx := e.AdminCtx()
	st := e.St
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	f.LLM, err = st.CreateTeam(ctx, store.TeamInput{Name: "llm"})
	must(err)
	f.Vision, err = st.CreateTeam(ctx, store.TeamInput{Name: "vision"})
	must(err)
	_, err = st.SetMembership(ctx, f.LLM.ID, e.Users[store.RoleMember].ID, store.TeamRoleMember)
	must(err)
	_, err = st.SetMembership(ctx, f.LLM.ID, e.Users[store.RoleManager].ID, store.TeamRoleManager)
	must(err)
	_, err = st.SetMembership(ctx, f.LLM.ID, e.Users[store.RoleViewer].ID, store.TeamRoleViewer)
	must(err)
	out, err := st.CreateUser(ctx, store.UserCreate{Username: "t-outsider", Password: "password-outsider", Role: store.RoleMember})
	must(err)
	_, secret, err := st.CreateAPIToken(ctx, out.ID, "test", store.TokenUser)
	must(err)
	f.Outsider = &Account{ID: out.ID, Username: out.Username, Role: store.RoleMember, Token: secret}
	_, err = st.SetMembership(ctx, f.Vision.ID, out.ID, store.TeamRoleMember)
	must(err)

	f.CT, err = st.CreateCardType(ctx, store.CardTypeInput{Name: "H800", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 1500})
	must(err)
	host, err := st.CreateHost(ctx, store.HostInput{Name: "gpu-01", Zone: "bj"})
	must(err)
	for i := 0; i < cards; i++ {
		cd, err := st.CreateCard(ctx, store.CardInput{UUID: fmt.Sprintf("GPU-%08d-aaaa-bbbb-cccc-dddddddddddd", i), GPUIndex: i, HostID: host.ID, CardTypeID: f.CT.ID})
		must(err)
		f.Cards = append(f.Cards, cd)
	}
	now := time.Now().UTC()
	f.Base = now.Truncate(time.Hour).Add(2 * time.Hour)
	f.Quota, err = st.CreateQuota(ctx, store.QuotaInput{TeamID: f.LLM.ID, CardTypeID: f.CT.ID, CardHours: quotaHours,
		ValidFrom: now.Add(-24 * time.Hour), ExpiresAt: f.Base.Add(30 * 24 * time.Hour)})
	must(err)
	_, err = st.CreateQuota(ctx, store.QuotaInput{TeamID: f.Vision.ID, CardTypeID: f.CT.ID, CardHours: quotaHours,
		ValidFrom: now.Add(-24 * time.Hour), ExpiresAt: f.Base.Add(30 * 24 * time.Hour)})
	must(err)
	member := store.WithActor(context.Background(), store.Actor{UserID: e.Users[store.RoleMember].ID, Username: "t-member"})
	mk := func(ctx context.Context, team int64, name, prio string) *store.Task {
		task, err := st.CreateTask(ctx, store.TaskInput{TeamID: team, Name: name, Priority: prio, EstimateCardHours: 50,
			DataReadiness: "ready", VRAMGiB: 60, Precision: "bf16"})
		must(err)
		return task
	}
	f.Normal = mk(member, f.LLM.ID, "eval", "normal")
	f.Core = mk(member, f.LLM.ID, "pretrain", "core")
	f.Backfill = mk(member, f.LLM.ID, "sweep", "backfill")
	f.VisionTask = mk(ctx, f.Vision.ID, "detector", "normal")
	return f
}

// Token is the API token of the test user of a role.
func (f *Fleet) Token(role string) string { return f.E.Users[role].Token }

// At is Base plus h hours, as RFC 3339.
func (f *Fleet) At(h float64) string {
	return f.Base.Add(time.Duration(h * float64(time.Hour))).Format(time.RFC3339)
}

// Call sends a JSON request; the answer is in English so messages can be
// compared with the catalogue.
func (f *Fleet) Call(method, path, token, body string) Response {
	f.E.T.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return f.C.APICall(method, path+sep+"lang=en", token, body)
}

// BookingBody is the JSON of a booking request from hour from to hour to.
func (f *Fleet) BookingBody(task int64, cardType string, count int, from, to float64) string {
	return fmt.Sprintf(`{"task_id":%d,"card_type":%q,"count":%d,"start":%q,"end":%q}`, task, cardType, count, f.At(from), f.At(to))
}

// Counts are the rows a refused request must not add.
type Counts struct{ Bookings, BookingCards, Audit, Tasks, Quotas int64 }

// Counts counts them.
func (f *Fleet) Counts() Counts {
	f.E.T.Helper()
	n := func(table string) int64 {
		var v int64
		if err := f.E.St.DB().QueryRow("SELECT COUNT(*) FROM " + table).Scan(&v); err != nil {
			f.E.T.Fatalf("count %s: %v", table, err)
		}
		return v
	}
	return Counts{n("bookings"), n("booking_cards"), n("audit_log"), n("tasks"), n("quotas")}
}
