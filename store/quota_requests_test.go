package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// renewal asks to move q's expiry days later.
func renewal(q *store.Quota, days int, reason string) store.QuotaRequestInput {
	t := q.ExpiresAt.Add(time.Duration(days) * 24 * time.Hour)
	return store.QuotaRequestInput{QuotaID: q.ID, Kind: store.QuotaRequestRenew, ExpiresAt: &t, Reason: reason}
}

func TestQuotaRequestWhoMayAsk(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		// A member of the team without a core task of their own.
		plain := MustUser(t, w.st, "intern", store.RoleMember)
		if _, err := w.st.SetMembership(as(w.admin), w.team.ID, plain.ID, store.TeamRoleMember); err != nil {
			t.Fatal(err)
		}
		viewer := MustUser(t, w.st, "watcher", store.RoleViewer)
		if _, err := w.st.SetMembership(as(w.admin), w.team.ID, viewer.ID, store.TeamRoleViewer); err != nil {
			t.Fatal(err)
		}
		in := renewal(w.quota, 30, "续训练到下月")
		_, err := w.st.CreateQuotaRequest(as(plain), in)
		storetest.AssertCode(t, err, errs.Forbidden, "quota_request.not_allowed")
		_, err = w.st.CreateQuotaRequest(as(viewer), in)
		storetest.AssertCode(t, err, errs.Forbidden, "quota_request.not_allowed")
		// Someone of another team does not see the quota at all.
		_, err = w.st.CreateQuotaRequest(as(w.outsider), in)
		storetest.AssertCode(t, err, errs.NotFound, "quota.not_found")
		// w.member wrote the core task "pretrain": they may ask.
		r, err := w.st.CreateQuotaRequest(as(w.member), in)
		if err != nil {
			t.Fatalf("member with a core task: %v", err)
		}
		if r.State != store.QuotaRequestPending || r.RequestedBy != w.member.ID || r.TeamID != w.team.ID {
			t.Errorf("request = %+v", r)
		}
		// The manager and an admin may ask too (once the first is decided).
		if _, err := w.st.DecideQuotaRequest(as(w.admin), r.ID, false, "先用完本期"); err != nil {
			t.Fatal(err)
		}
		r2, err := w.st.CreateQuotaRequest(as(w.manager), in)
		if err != nil {
			t.Fatalf("manager: %v", err)
		}
		if _, err := w.st.DecideQuotaRequest(as(w.admin), r2.ID, false, "no"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.CreateQuotaRequest(as(w.admin), in); err != nil {
			t.Fatalf("admin: %v", err)
		}
	})
}

func TestQuotaRequestOnePendingPerQuota(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		if _, err := w.st.CreateQuotaRequest(as(w.member), renewal(w.quota, 30, "a")); err != nil {
			t.Fatal(err)
		}
		hours := 2000.0
		_, err := w.st.CreateQuotaRequest(as(w.manager), store.QuotaRequestInput{QuotaID: w.quota.ID, Kind: store.QuotaRequestAdjust, CardHours: &hours, Reason: "b"})
		storetest.AssertCode(t, err, errs.Conflict, "quota_request.pending_exists")
		if n := storetest.MustCount(t, w.st, "quota_requests"); n != 1 {
			t.Errorf("requests = %d, want 1", n)
		}
	})
}

func TestQuotaRequestInvalidWritesNothing(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		same := w.quota.ExpiresAt
		earlier := w.quota.ExpiresAt.Add(-24 * time.Hour)
		far := w.clock.Now().AddDate(10, 0, 0)
		past := w.clock.Now().Add(-time.Hour)
		zero, huge, negCap := 0.0, 1e9, -1
		sameHours := w.quota.CardHours()
		cases := []struct {
			name   string
			in     store.QuotaRequestInput
			fields map[string]string
		}{
			{"no reason", store.QuotaRequestInput{Kind: store.QuotaRequestRenew, ExpiresAt: ptr(w.quota.ExpiresAt.Add(time.Hour)), Reason: "  "},
				map[string]string{"reason": "quota_request.reason_required"}},
			{"reason too long", store.QuotaRequestInput{Kind: store.QuotaRequestRenew, ExpiresAt: ptr(w.quota.ExpiresAt.Add(time.Hour)), Reason: strings.Repeat("长", 501)},
				map[string]string{"reason": "quota_request.reason_too_long"}},
			{"unknown kind", store.QuotaRequestInput{Kind: "grow", Reason: "x"},
				map[string]string{"kind": "quota_request.kind_invalid"}},
			{"renew without expiry", store.QuotaRequestInput{Kind: store.QuotaRequestRenew, Reason: "x"},
				map[string]string{"expires_at": "quota_request.renew_needs_expiry"}},
			{"renew to the same expiry", store.QuotaRequestInput{Kind: store.QuotaRequestRenew, ExpiresAt: &same, Reason: "x"},
				map[string]string{"expires_at": "quota_request.renew_needs_expiry"}},
			{"renew to an earlier expiry", store.QuotaRequestInput{Kind: store.QuotaRequestRenew, ExpiresAt: &earlier, Reason: "x"},
				map[string]string{"expires_at": "quota_request.renew_later"}},
			{"renew ten years out", store.QuotaRequestInput{Kind: store.QuotaRequestRenew, ExpiresAt: &far, Reason: "x"},
				map[string]string{"expires_at": "quota_request.expiry_too_far"}},
			{"adjust nothing", store.QuotaRequestInput{Kind: store.QuotaRequestAdjust, CardHours: &sameHours, Reason: "x"},
				map[string]string{"card_hours": "quota_request.nothing_changed"}},
			{"adjust to an expiry past", store.QuotaRequestInput{Kind: store.QuotaRequestAdjust, ExpiresAt: &past, Reason: "x"},
				map[string]string{"expires_at": "quota_request.expiry_past"}},
			{"adjust to zero hours", store.QuotaRequestInput{Kind: store.QuotaRequestAdjust, CardHours: &zero, Reason: "x"},
				map[string]string{"card_hours": "quota.hours_range"}},
			{"adjust to a billion hours", store.QuotaRequestInput{Kind: store.QuotaRequestAdjust, CardHours: &huge, Reason: "x"},
				map[string]string{"card_hours": "quota.hours_range"}},
			{"adjust to a negative cap", store.QuotaRequestInput{Kind: store.QuotaRequestAdjust, MaxCards: &negCap, Reason: "x"},
				map[string]string{"max_cards": "quota.max_cards_range"}},
		}
		before := storetest.MustCounts(t, w.st)
		for _, c := range cases {
			c.in.QuotaID = w.quota.ID
			_, err := w.st.CreateQuotaRequest(as(w.manager), c.in)
			e := storetest.AssertCode(t, err, errs.Invalid, "")
			if e != nil {
				assertFields(t, e.Fields, c.fields)
			}
		}
		storetest.AssertUnchanged(t, w.st, before)
	})
}

func TestQuotaRequestApproveAppliesAuditsNotifies(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		second := MustUser(t, w.st, "root2", store.RoleAdmin)
		hours, maxCards := 1500.0, 3
		newExpiry := w.quota.ExpiresAt.Add(20 * 24 * time.Hour)
		ctx := store.WithActor(context.Background(), store.Actor{UserID: w.manager.ID, Username: w.manager.Username, IP: "192.0.2.9"})
		r, err := w.st.CreateQuotaRequest(ctx, store.QuotaRequestInput{QuotaID: w.quota.ID, Kind: store.QuotaRequestAdjust,
			CardHours: &hours, MaxCards: &maxCards, ExpiresAt: &newExpiry, Reason: "多跑一轮消融"})
		if err != nil {
			t.Fatal(err)
		}
		e := lastAudit(t, w.st)
		if e.Action != "create" || e.Entity != "quota_request" || e.EntityID != r.ID {
			t.Errorf("audit after create = %s %s #%d", e.Action, e.Entity, e.EntityID)
		}
		for _, admin := range []*store.User{w.admin, second} {
			ns, err := w.st.FindNotifications(context.Background(), admin.ID, true, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(ns) != 1 || ns[0].Kind != "quota_request" || ns[0].MessageKey != "notify.quota_request_adjust" {
				t.Errorf("admin %s notices = %+v", admin.Username, ns)
			}
		}
		// The quota changes meanwhile (its note): the request still
		// applies what it asked, and leaves the rest as it is now.
		cur := store.QuotaInput{TeamID: w.quota.TeamID, CardTypeID: w.quota.CardTypeID, CardHours: 1000, ValidFrom: w.quota.ValidFrom,
			ExpiresAt: w.quota.ExpiresAt, Note: "调整前的备注"}
		if _, err := w.st.UpdateQuota(as(w.admin), w.quota.ID, cur); err != nil {
			t.Fatal(err)
		}
		audits := auditCount(t, w.st)
		got, err := w.st.DecideQuotaRequest(as(w.admin), r.ID, true, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.QuotaRequestApproved || got.DecidedBy == nil || *got.DecidedBy != w.admin.ID || got.DecidedAt == nil {
			t.Errorf("decided = %+v", got)
		}
		if n := auditCount(t, w.st); n != audits+2 {
			t.Errorf("audit entries = %d, want %d (the quota's update and the approval)", n, audits+2)
		}
		if e := lastAudit(t, w.st); e.Action != "approve" || e.Entity != "quota_request" || e.EntityID != r.ID {
			t.Errorf("last audit = %s %s #%d", e.Action, e.Entity, e.EntityID)
		}
		q, err := w.st.FindQuotaByID(context.Background(), w.quota.ID)
		if err != nil {
			t.Fatal(err)
		}
		if q.GrantedHours != 1500 || q.MaxCards != 3 || !q.ExpiresAt.Equal(newExpiry.Truncate(time.Microsecond)) || q.Note != "调整前的备注" {
			t.Errorf("quota after approval = %v h, cap %d, expires %v, note %q", q.GrantedHours, q.MaxCards, q.ExpiresAt, q.Note)
		}
		ns, err := w.st.FindNotifications(context.Background(), w.manager.ID, true, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != 1 || ns[0].Kind != "quota_request_decided" || ns[0].MessageKey != "notify.quota_request_approved" {
			t.Fatalf("requester notices = %+v", ns)
		}
		// Decided once is decided.
		_, err = w.st.DecideQuotaRequest(as(w.admin), r.ID, false, "again")
		storetest.AssertCode(t, err, errs.Conflict, "quota_request.decided")
	})
}

func TestQuotaRequestRefuseNeedsNoteAndAdmin(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		r, err := w.st.CreateQuotaRequest(as(w.member), renewal(w.quota, 10, "长跑任务"))
		if err != nil {
			t.Fatal(err)
		}
		before := storetest.MustCounts(t, w.st)
		_, err = w.st.DecideQuotaRequest(as(w.admin), r.ID, false, "   ")
		storetest.AssertCode(t, err, errs.Invalid, "quota_request.note_required")
		_, err = w.st.DecideQuotaRequest(as(w.manager), r.ID, true, "")
		storetest.AssertCode(t, err, errs.Forbidden, "quota_request.admin_only")
		storetest.AssertUnchanged(t, w.st, before)
		got, err := w.st.DecideQuotaRequest(as(w.admin), r.ID, false, "本期还剩很多")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.QuotaRequestRefused || got.DecisionNote != "本期还剩很多" {
			t.Errorf("refused = %+v", got)
		}
		q, _ := w.st.FindQuotaByID(context.Background(), w.quota.ID)
		if !q.ExpiresAt.Equal(w.quota.ExpiresAt) {
			t.Errorf("a refusal changed the quota's expiry to %v", q.ExpiresAt)
		}
		ns, _ := w.st.FindNotifications(context.Background(), w.member.ID, true, 10)
		if len(ns) == 0 || ns[0].MessageKey != "notify.quota_request_refused" || len(ns[0].Args()) != 3 || ns[0].Args()[2] != "本期还剩很多" {
			t.Errorf("requester notices = %+v", ns)
		}
	})
}

// An approval whose values no longer make a valid quota fails with the
// quota's own error and leaves the request pending.
func TestQuotaRequestApprovalHeldToQuotaRules(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		r, err := w.st.CreateQuotaRequest(as(w.manager), renewal(w.quota, 30, "续"))
		if err != nil {
			t.Fatal(err)
		}
		// A following quota now occupies the asked extension.
		if _, err := w.st.CreateQuota(as(w.admin), store.QuotaInput{TeamID: w.team.ID, CardTypeID: w.ct.ID, CardHours: 10,
			ValidFrom: w.quota.ExpiresAt, ExpiresAt: w.quota.ExpiresAt.Add(60 * 24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		_, err = w.st.DecideQuotaRequest(as(w.admin), r.ID, true, "")
		storetest.AssertCode(t, err, errs.Conflict, "quota.overlap")
		v, err := w.st.FindQuotaRequestByID(as(w.admin), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.State != store.QuotaRequestPending {
			t.Errorf("state = %s, want pending", v.State)
		}
	})
}

func TestFindQuotaRequestsScoped(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 2)
		other, err := w.st.FindQuotas(context.Background(), store.QuotaFilter{TeamIDs: []int64{w.otherTeam.ID}})
		if err != nil || len(other) != 1 {
			t.Fatalf("other team's quotas = %v, %v", other, err)
		}
		// outsider has no core task; give them one so they may ask.
		if _, err := w.st.CreateTask(as(w.outsider), store.TaskInput{TeamID: w.otherTeam.ID, Name: "core-vision", Priority: schedule.Core,
			EstimateCardHours: 10, DataReadiness: schedule.DataReady}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.CreateQuotaRequest(as(w.member), renewal(w.quota, 5, "mine")); err != nil {
			t.Fatal(err)
		}
		oq := other[0].Quota
		if _, err := w.st.CreateQuotaRequest(as(w.outsider), renewal(&oq, 5, "theirs")); err != nil {
			t.Fatal(err)
		}
		count := func(u *store.User, f store.QuotaRequestFilter) int {
			t.Helper()
			rs, err := w.st.FindQuotaRequests(as(u), f)
			if err != nil {
				t.Fatal(err)
			}
			return len(rs)
		}
		if n := count(w.admin, store.QuotaRequestFilter{}); n != 2 {
			t.Errorf("admin sees %d, want 2", n)
		}
		if n := count(w.member, store.QuotaRequestFilter{}); n != 1 {
			t.Errorf("member sees %d, want 1", n)
		}
		// Asking for another team's requests by filter shows none.
		if n := count(w.manager, store.QuotaRequestFilter{TeamIDs: []int64{w.otherTeam.ID}}); n != 0 {
			t.Errorf("manager sees %d of the other team's, want 0", n)
		}
		if n := count(w.admin, store.QuotaRequestFilter{State: store.QuotaRequestPending, QuotaID: w.quota.ID}); n != 1 {
			t.Errorf("admin sees %d pending on the quota, want 1", n)
		}
		rs, _ := w.st.FindQuotaRequests(as(w.member), store.QuotaRequestFilter{})
		if len(rs) == 1 {
			v := rs[0]
			if v.TeamName != "llm" || v.CardTypeName != "H800" || v.RequesterName != "dev" || v.QuotaHours != 1000 || v.ExpiresAt == nil {
				t.Errorf("view = %+v", v)
			}
		}
		_, err = w.st.FindQuotaRequests(context.Background(), store.QuotaRequestFilter{})
		storetest.AssertCode(t, err, errs.Unauthorized, "")
	})
}
