package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestAgentTokensReportOnlyTheirHosts(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		tok, secret, err := w.st.CreateTelemetryToken(as(w.admin), store.TokenAgent, "rack-7", "GPU-BJ-01", "gpu-bj-01", " gpu-bj-02 ")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tok.Hosts, []string{"gpu-bj-01", "gpu-bj-02"}) {
			t.Errorf("hosts %v", tok.Hosts)
		}
		found, err := w.st.FindTelemetryToken(ctx, store.TokenAgent, secret)
		if err != nil || !slices.Equal(found.Hosts, tok.Hosts) {
			t.Fatalf("found %+v %v", found, err)
		}
		if !found.MayReport("GPU-BJ-02") || found.MayReport("gpu-bj-03") || found.MayReport("") {
			t.Error("MayReport does not follow the bound hosts")
		}
		list, err := w.st.FindTelemetryTokens(ctx)
		if err != nil || len(list) != 1 || !slices.Equal(list[0].Hosts, tok.Hosts) {
			t.Errorf("list %+v %v", list, err)
		}

		// Refused: hosts on a board token, a host the push endpoint would
		// refuse, too many. Nothing is written.
		before := storetest.MustCounts(t, w.st)
		many := make([]string, store.MaxTokenHosts+1)
		for i := range many {
			many[i] = fmt.Sprintf("h%d", i)
		}
		long := make([]string, 20)
		for i := range long {
			long[i] = fmt.Sprintf("%s-%02d", strings.Repeat("h", 60), i)
		}
		for _, c := range []struct {
			kind  string
			hosts []string
			key   string
			args  string
		}{
			{store.TokenBoard, []string{"gpu-bj-01"}, "token.hosts_agent_only", "[]"},
			{store.TokenAgent, []string{"gpu bj 01"}, "token.host_invalid", "[gpu bj 01]"},
			{store.TokenAgent, []string{"-gpu"}, "token.host_invalid", "[-gpu]"},
			{store.TokenAgent, many, "token.hosts_too_many", "[64]"},
			{store.TokenAgent, long, "token.hosts_too_long", "[1000]"},
		} {
			_, _, err := w.st.CreateTelemetryToken(as(w.admin), c.kind, "x", c.hosts...)
			e := storetest.AssertCode(t, err, errs.Invalid, c.key)
			if e.Fields["hosts"] != c.key || fmt.Sprint(e.Args) != c.args {
				t.Errorf("%s: fields %v args %v, want %s", c.key, e.Fields, e.Args, c.args)
			}
		}
		storetest.AssertUnchanged(t, w.st, before)

		// Issued without hosts (the old call): bound to none, so it may
		// report nowhere until it binds its first host.
		open, openSecret, err := w.st.CreateTelemetryToken(as(w.admin), store.TokenAgent, "anywhere")
		if err != nil {
			t.Fatal(err)
		}
		if raw, _ := json.Marshal(open); strings.Contains(string(raw), `"hosts"`) {
			t.Errorf("an unbound token's JSON names hosts: %s", raw)
		}
		if open.MayReport("gpu-bj-09") {
			t.Error("an unbound token may report")
		}
		// Two processes binding two first hosts at once: one wins, both
		// are told the winner, one audit entry.
		audits := auditCount(t, w.st)
		var wg sync.WaitGroup
		got := make([][]string, 2)
		errsOf := make([]error, 2)
		for i, host := range []string{"GPU-BJ-09", "gpu-bj-10"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errsOf[i] = w.st.BindTokenHost(ctx, open.ID, host)
			}()
		}
		wg.Wait()
		if errsOf[0] != nil || errsOf[1] != nil {
			t.Fatal(errsOf)
		}
		if len(got[0]) != 1 || !slices.Equal(got[0], got[1]) || (got[0][0] != "gpu-bj-09" && got[0][0] != "gpu-bj-10") {
			t.Fatalf("bound %v and %v, want one host for both", got[0], got[1])
		}
		if n := auditCount(t, w.st); n != audits+1 {
			t.Errorf("%d audit entries for one binding", n-audits)
		}
		if e := lastAudit(t, w.st); e.Action != "bind_host" || e.EntityID != open.ID || e.ActorName != "telemetry" {
			t.Errorf("audit %+v", e)
		}
		if again, err := w.st.BindTokenHost(ctx, open.ID, "gpu-bj-11"); err != nil || !slices.Equal(again, got[0]) {
			t.Errorf("a bound token bound again: %v %v", again, err)
		}
		if bound, err := w.st.FindTelemetryToken(ctx, store.TokenAgent, openSecret); err != nil || !bound.MayReport(got[0][0]) || bound.MayReport("gpu-bj-11") {
			t.Errorf("after binding: %+v %v", bound, err)
		}
		if b, err := w.st.BindTokenHost(ctx, tok.ID, "gpu-bj-12"); err != nil || !slices.Equal(b, tok.Hosts) {
			t.Errorf("a token issued for hosts bound another: %v %v", b, err)
		}
		_, err = w.st.BindTokenHost(ctx, 9999, "gpu-bj-12")
		storetest.AssertCode(t, err, errs.NotFound, "token.not_found")
		for _, host := range []string{"bad host", " "} {
			_, err = w.st.BindTokenHost(ctx, open.ID, host)
			if e := storetest.AssertCode(t, err, errs.Invalid, "token.host_invalid"); e.Fields["host"] != "token.host_invalid" {
				t.Errorf("host %q: fields %v, want the message on host", host, e.Fields)
			}
		}
	})
}
