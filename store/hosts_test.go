package store_test

import (
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestHostLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()

		n := auditCount(t, st)
		h, err := st.CreateHost(ctx, store.HostInput{Name: " gpu-bj-h800-01 ", Zone: " 华北2-可用区A "})
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "gpu-bj-h800-01" || h.Zone != "华北2-可用区A" || !h.CreatedAt.Equal(clock.Now()) {
			t.Errorf("created %+v", h)
		}
		_, after := wantAudit(t, st, n, "create", "host", h.ID, false, true)
		if after["zone"] != "华北2-可用区A" {
			t.Errorf("audit after = %v", after)
		}
		got, err := st.FindHostByID(ctx, h.ID)
		if err != nil || got.Name != h.Name || got.Zone != h.Zone || !got.CreatedAt.Equal(h.CreatedAt) {
			t.Errorf("FindHostByID = %+v, %v", got, err)
		}

		clock.Advance(60e9)
		n = auditCount(t, st)
		up, err := st.UpdateHost(ctx, h.ID, store.HostInput{Name: "gpu-bj-h800-9", Zone: ""})
		if err != nil {
			t.Fatal(err)
		}
		if up.Name != "gpu-bj-h800-9" || up.Zone != "" || !up.UpdatedAt.Equal(clock.Now()) {
			t.Errorf("updated %+v", up)
		}
		b, a := wantAudit(t, st, n, "update", "host", h.ID, true, true)
		if b["name"] != "gpu-bj-h800-01" || a["name"] != "gpu-bj-h800-9" {
			t.Errorf("audit name %v -> %v", b["name"], a["name"])
		}

		MustHost(t, st, "gpu-a")
		hosts, err := st.FindHosts(ctx)
		if err != nil || len(hosts) != 2 || hosts[0].Name != "gpu-a" {
			t.Errorf("FindHosts = %+v, %v; want by name", hosts, err)
		}

		n = auditCount(t, st)
		if err := st.DeleteHost(ctx, h.ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "delete", "host", h.ID, true, false)
		_, err = st.FindHostByID(ctx, h.ID)
		storetest.AssertCode(t, err, errs.NotFound, "host.not_found")
	})
}

func TestHostRefusals(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		h := MustHost(t, st, "gpu-01")
		MustHost(t, st, "gpu-02")
		before := storetest.MustCounts(t, st)
		for _, c := range []struct {
			name   string
			in     store.HostInput
			fields map[string]string
		}{
			{"no name", store.HostInput{Name: "  "}, map[string]string{"name": "field.required"}},
			{"space in name", store.HostInput{Name: "gpu 03"}, map[string]string{"name": "host.name_invalid"}},
			{"query characters", store.HostInput{Name: "gpu&x=1"}, map[string]string{"name": "host.name_invalid"}},
			{"long name", store.HostInput{Name: strings.Repeat("h", 101)}, map[string]string{"name": "field.too_long"}},
			{"long zone", store.HostInput{Name: "gpu-03", Zone: strings.Repeat("区", 101)}, map[string]string{"zone": "field.too_long"}},
		} {
			_, err := st.CreateHost(ctx, c.in)
			e := storetest.AssertCode(t, err, errs.Invalid, "")
			assertFields(t, e.Fields, c.fields)
			_, err = st.UpdateHost(ctx, h.ID, c.in)
			e = storetest.AssertCode(t, err, errs.Invalid, "")
			assertFields(t, e.Fields, c.fields)
		}
		_, err := st.CreateHost(ctx, store.HostInput{Name: "GPU-01"})
		e := storetest.AssertCode(t, err, errs.Conflict, "host.name_taken")
		assertFields(t, e.Fields, map[string]string{"name": "host.name_taken"})
		_, err = st.UpdateHost(ctx, h.ID, store.HostInput{Name: "gpu-02"})
		storetest.AssertCode(t, err, errs.Conflict, "host.name_taken")
		_, err = st.UpdateHost(ctx, 999, store.HostInput{Name: "gpu-09"})
		storetest.AssertCode(t, err, errs.NotFound, "host.not_found")
		err = st.DeleteHost(ctx, 999)
		storetest.AssertCode(t, err, errs.NotFound, "host.not_found")
		storetest.AssertUnchanged(t, st, before)
	})
}

// A host that carries cards is kept: the foreign key refuses, and the store
// says which rule, on both dialects.
func TestDeleteHostInUse(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		h := MustHost(t, st, "gpu-01")
		ct := MustCardType(t, st, "H800")
		c := MustCard(t, st, "GPU-00000000-0000-0000-0000-000000000001", 0, h.ID, ct.ID)
		before := storetest.MustCounts(t, st)
		err := st.DeleteHost(ctx, h.ID)
		storetest.AssertCode(t, err, errs.Conflict, "host.in_use")
		storetest.AssertUnchanged(t, st, before)
		if _, err := st.FindHostByID(ctx, h.ID); err != nil {
			t.Errorf("host in use is gone: %v", err)
		}
		// Once its cards are gone, so may the host be.
		if err := st.DeleteCard(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteHost(ctx, h.ID); err != nil {
			t.Errorf("delete an empty host: %v", err)
		}
	})
}
