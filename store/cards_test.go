package store_test

import (
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

const (
	uuid1 = "GPU-5c4e8b0e-8f3a-4d1b-9a6e-1f2d3c4b5a61"
	uuid2 = "GPU-5c4e8b0e-8f3a-4d1b-9a6e-1f2d3c4b5a62"
	uuid3 = "MIG-5c4e8b0e-8f3a-4d1b-9a6e-1f2d3c4b5a63"
)

func TestCardLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()
		hb, ha := MustHost(t, st, "gpu-b"), MustHost(t, st, "gpu-a")
		h800, l40s := MustCardType(t, st, "H800"), MustCardType(t, st, "L40S")

		n := auditCount(t, st)
		c, err := st.CreateCard(ctx, store.CardInput{UUID: " " + uuid1 + " ", GPUIndex: 3, HostID: hb.ID, CardTypeID: h800.ID})
		if err != nil {
			t.Fatal(err)
		}
		if c.UUID != uuid1 || c.GPUIndex != 3 || c.Status != store.CardActive || !c.CreatedAt.Equal(clock.Now()) {
			t.Errorf("created %+v, want trimmed uuid and status active", c)
		}
		_, after := wantAudit(t, st, n, "create", "card", c.ID, false, true)
		if after["uuid"] != uuid1 || after["index"] != float64(3) {
			t.Errorf("audit after = %v", after)
		}

		v, err := st.FindCardByID(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.UUID != uuid1 || v.HostName != "gpu-b" || v.Zone != "华北2-可用区A" || v.CardTypeName != "H800" || v.VRAMGiB != 80 ||
			v.HostID != hb.ID || v.CardTypeID != h800.ID || !v.CreatedAt.Equal(c.CreatedAt) {
			t.Errorf("FindCardByID = %+v", v)
		}

		MustCard(t, st, uuid2, 0, hb.ID, l40s.ID)
		MustCard(t, st, uuid3, 1, ha.ID, h800.ID)
		names := func(f store.CardFilter) []string {
			t.Helper()
			cs, err := st.FindCards(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, c := range cs {
				out = append(out, c.UUID)
			}
			return out
		}
		// By host name, then index.
		if got := names(store.CardFilter{}); !equal(got, uuid3, uuid2, uuid1) {
			t.Errorf("FindCards = %v", got)
		}
		if got := names(store.CardFilter{HostID: hb.ID}); !equal(got, uuid2, uuid1) {
			t.Errorf("FindCards(host b) = %v", got)
		}
		if got := names(store.CardFilter{CardTypeID: h800.ID}); !equal(got, uuid3, uuid1) {
			t.Errorf("FindCards(H800) = %v", got)
		}

		clock.Advance(60e9)
		n = auditCount(t, st)
		up, err := st.UpdateCard(ctx, c.ID, store.CardInput{UUID: uuid1, GPUIndex: 4, HostID: ha.ID, CardTypeID: h800.ID, Status: store.CardRetired})
		if err != nil {
			t.Fatal(err)
		}
		if up.Status != store.CardRetired || up.GPUIndex != 4 || up.HostID != ha.ID || !up.UpdatedAt.Equal(clock.Now()) || !up.CreatedAt.Equal(c.CreatedAt) {
			t.Errorf("updated %+v", up)
		}
		b, a := wantAudit(t, st, n, "update", "card", c.ID, true, true)
		if b["status"] != store.CardActive || a["status"] != store.CardRetired {
			t.Errorf("audit status %v -> %v", b["status"], a["status"])
		}
		if got := names(store.CardFilter{Status: store.CardRetired}); !equal(got, uuid1) {
			t.Errorf("FindCards(retired) = %v", got)
		}

		n = auditCount(t, st)
		if err := st.DeleteCard(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "delete", "card", c.ID, true, false)
		_, err = st.FindCardByID(ctx, c.ID)
		storetest.AssertCode(t, err, errs.NotFound, "card.not_found")
	})
}

func TestCardRefusals(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		h := MustHost(t, st, "gpu-01")
		ct := MustCardType(t, st, "H800")
		c := MustCard(t, st, uuid1, 0, h.ID, ct.ID)
		MustCard(t, st, uuid2, 1, h.ID, ct.ID)
		before := storetest.MustCounts(t, st)
		ok := store.CardInput{UUID: uuid3, GPUIndex: 2, HostID: h.ID, CardTypeID: ct.ID}
		mod := func(f func(*store.CardInput)) store.CardInput {
			in := ok
			f(&in)
			return in
		}

		for _, x := range []struct {
			name   string
			in     store.CardInput
			fields map[string]string
		}{
			{"uuid without prefix", mod(func(in *store.CardInput) { in.UUID = "5c4e8b0e-8f3a" }), map[string]string{"uuid": "card.uuid_invalid"}},
			{"empty uuid", mod(func(in *store.CardInput) { in.UUID = "" }), map[string]string{"uuid": "card.uuid_invalid"}},
			{"negative index", mod(func(in *store.CardInput) { in.GPUIndex = -1 }), map[string]string{"index": "card.index_range"}},
			{"index too large", mod(func(in *store.CardInput) { in.GPUIndex = 1024 }), map[string]string{"index": "card.index_range"}},
			{"unknown status", mod(func(in *store.CardInput) { in.Status = "broken" }), map[string]string{"status": "card.status_invalid"}},
			{"no host", mod(func(in *store.CardInput) { in.HostID = 0 }), map[string]string{"host_id": "host.not_found"}},
			// Missing references are caught before the foreign key, so both
			// dialects give the same field message.
			{"missing host", mod(func(in *store.CardInput) { in.HostID = 999 }), map[string]string{"host_id": "host.not_found"}},
			{"missing card type", mod(func(in *store.CardInput) { in.CardTypeID = 999 }), map[string]string{"card_type_id": "cardtype.not_found"}},
			{"missing both", mod(func(in *store.CardInput) { in.HostID, in.CardTypeID = 998, 999 }),
				map[string]string{"host_id": "host.not_found", "card_type_id": "cardtype.not_found"}},
		} {
			t.Run(x.name, func(t *testing.T) {
				got, err := st.CreateCard(ctx, x.in)
				if got != nil {
					t.Errorf("created %+v", got)
				}
				e := storetest.AssertCode(t, err, errs.Invalid, "")
				assertFields(t, e.Fields, x.fields)
				_, err = st.UpdateCard(ctx, c.ID, x.in)
				e = storetest.AssertCode(t, err, errs.Invalid, "")
				assertFields(t, e.Fields, x.fields)
			})
		}
		_, err := st.CreateCard(ctx, mod(func(in *store.CardInput) { in.HostID = 999 }))
		storetest.AssertCode(t, err, errs.Invalid, "host.not_found")

		for _, dup := range []string{uuid1, "  " + uuid1} {
			got, err := st.CreateCard(ctx, mod(func(in *store.CardInput) { in.UUID = dup }))
			if got != nil {
				t.Errorf("created %+v", got)
			}
			e := storetest.AssertCode(t, err, errs.Conflict, "card.uuid_taken")
			assertFields(t, e.Fields, map[string]string{"uuid": "card.uuid_taken"})
		}
		_, err = st.UpdateCard(ctx, c.ID, mod(func(in *store.CardInput) { in.UUID = uuid2 }))
		storetest.AssertCode(t, err, errs.Conflict, "card.uuid_taken")
		_, err = st.UpdateCard(ctx, 999, ok)
		storetest.AssertCode(t, err, errs.NotFound, "card.not_found")
		err = st.DeleteCard(ctx, 999)
		storetest.AssertCode(t, err, errs.NotFound, "card.not_found")
		storetest.AssertUnchanged(t, st, before)

		read, err := st.FindCardByID(ctx, c.ID)
		if err != nil || read.UUID != uuid1 || read.GPUIndex != 0 || read.Status != store.CardActive {
			t.Errorf("refused updates changed the card: %+v, %v", read, err)
		}
	})
}

// A uuid names one GPU however it is typed; MySQL's collation and SQLite's
// must agree on that, or a fleet moved between them would change meaning.
func TestCardUUIDIsCaseInsensitive(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := MustHost(t, st, "gpu-01")
		ct := MustCardType(t, st, "H800")
		MustCard(t, st, uuid1, 0, h.ID, ct.ID)
		_, err := st.CreateCard(asActor(), store.CardInput{UUID: "GPU-5C4E8B0E-8F3A-4D1B-9A6E-1F2D3C4B5A61", GPUIndex: 1, HostID: h.ID, CardTypeID: ct.ID})
		storetest.AssertCode(t, err, errs.Conflict, "card.uuid_taken")
	})
}

func equal(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
