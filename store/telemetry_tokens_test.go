package store_test

import (
	"context"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestTelemetryTokensAreNarrowAndAdminOnly(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		if _, _, err := w.st.CreateTelemetryToken(as(w.manager), store.TokenBoard, "wall"); !errs.Is(err, errs.Forbidden) {
			t.Errorf("a manager issued a board token: %v", err)
		}
		if _, _, err := w.st.CreateTelemetryToken(as(w.admin), store.TokenUser, "x"); !errs.Is(err, errs.Invalid) {
			t.Errorf("a user token through the telemetry door: %v", err)
		}
		agent, agentSecret, err := w.st.CreateTelemetryToken(as(w.admin), store.TokenAgent, "gpu-01")
		if err != nil {
			t.Fatal(err)
		}
		_, boardSecret, err := w.st.CreateTelemetryToken(as(w.admin), store.TokenBoard, "")
		if err != nil {
			t.Fatal(err)
		}
		if agentSecret[:4] != "cha_" || boardSecret[:4] != "chb_" {
			t.Errorf("secrets %q %q: want the cha_/chb_ prefixes", agentSecret[:4], boardSecret[:4])
		}
		if tok, err := w.st.FindTelemetryToken(ctx, store.TokenAgent, agentSecret); err != nil || tok.ID != agent.ID {
			t.Errorf("agent token: %v %v", tok, err)
		}
		for _, c := range []struct{ kind, secret string }{
			{store.TokenBoard, agentSecret}, {store.TokenAgent, boardSecret}, {store.TokenAgent, "cha_nope"}, {store.TokenUser, agentSecret},
		} {
			if _, err := w.st.FindTelemetryToken(ctx, c.kind, c.secret); !errs.Is(err, errs.Unauthorized) {
				t.Errorf("%s token %q…: %v, want unauthorized", c.kind, c.secret[:6], err)
			}
		}
		// Neither acts as the admin who issued it.
		for _, secret := range []string{agentSecret, boardSecret} {
			if _, _, err := w.st.FindTokenUser(ctx, secret); !errs.Is(err, errs.Unauthorized) {
				t.Errorf("FindTokenUser(%s…) = %v, want unauthorized", secret[:4], err)
			}
		}
		list, err := w.st.FindTelemetryTokens(ctx)
		if err != nil || len(list) != 2 || list[0].CreatedBy != "root" || list[0].Kind != store.TokenBoard || list[0].Name != "board" {
			t.Errorf("list %+v %v", list, err)
		}
		if err := w.st.RevokeTelemetryToken(as(w.member), agent.ID); !errs.Is(err, errs.Forbidden) {
			t.Errorf("a member revoked: %v", err)
		}
		if err := w.st.RevokeTelemetryToken(as(w.admin), agent.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.FindTelemetryToken(ctx, store.TokenAgent, agentSecret); !errs.Is(err, errs.Unauthorized) {
			t.Errorf("revoked token: %v", err)
		}
	})
}
