package store_test

import (
	"context"
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestCardTypeLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()

		n := auditCount(t, st)
		in := h100(" NVIDIA H800 80GB ")
		ct, err := st.CreateCardType(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if ct.Name != "NVIDIA H800 80GB" {
			t.Errorf("name = %q, want it trimmed", ct.Name)
		}
		_, after := wantAudit(t, st, n, "create", "card_type", ct.ID, false, true)
		if after["price_fen"] != float64(2200) || after["tflops_tf32"] != 494.7 {
			t.Errorf("audit after = %v", after)
		}

		got, err := st.FindCardTypeByID(ctx, ct.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Floats and money come back exactly on both dialects.
		want := *ct
		if got.Name != want.Name || got.VRAMGiB != 80 || got.PriceFen != 2200 || got.TFLOPSFP32 != 67 || got.TFLOPSTF32 != 494.7 ||
			got.TFLOPSBF16 != 989.4 || got.TFLOPSFP16 != 989.4 || got.TFLOPSFP8 != 1978.9 || got.TFLOPSINT8 != 1978.9 ||
			!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
			t.Errorf("read back %+v, want %+v", got, want)
		}
		if got.TFLOPS("bf16") != 989.4 || got.TFLOPS("fp4") != 0 {
			t.Errorf("TFLOPS(bf16) = %v, TFLOPS(fp4) = %v", got.TFLOPS("bf16"), got.TFLOPS("fp4"))
		}
		byName, err := st.FindCardTypeByName(ctx, "nvidia h800 80gb ")
		if err != nil || byName.ID != ct.ID {
			t.Errorf("FindCardTypeByName (other case) = %+v, %v", byName, err)
		}

		clock.Advance(3600e9)
		n = auditCount(t, st)
		in = h100("NVIDIA H800 80GB")
		in.PriceFen, in.TFLOPSFP8, in.TFLOPSINT8 = 2000, 0, 0
		up, err := st.UpdateCardType(ctx, ct.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if up.PriceFen != 2000 || up.TFLOPSFP8 != 0 || !up.UpdatedAt.Equal(clock.Now()) || !up.CreatedAt.Equal(ct.CreatedAt) {
			t.Errorf("updated %+v", up)
		}
		b, a := wantAudit(t, st, n, "update", "card_type", ct.ID, true, true)
		if b["price_fen"] != float64(2200) || a["price_fen"] != float64(2000) {
			t.Errorf("audit price %v -> %v", b["price_fen"], a["price_fen"])
		}

		cheap := h100("NVIDIA GeForce RTX 4090 24GB")
		cheap.VRAMGiB, cheap.PriceFen = 24, 350
		if _, err := st.CreateCardType(ctx, cheap); err != nil {
			t.Fatal(err)
		}
		all, err := st.FindCardTypes(ctx)
		if err != nil || len(all) != 2 || all[0].PriceFen != 350 || all[1].ID != ct.ID {
			t.Errorf("FindCardTypes = %+v, %v; want cheapest first", all, err)
		}

		n = auditCount(t, st)
		if err := st.DeleteCardType(ctx, ct.ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "delete", "card_type", ct.ID, true, false)
		_, err = st.FindCardTypeByID(ctx, ct.ID)
		storetest.AssertCode(t, err, errs.NotFound, "cardtype.not_found")
	})
}

func TestCardTypeRefusals(t *testing.T) {
	t.Parallel()
	mod := func(f func(*store.CardTypeInput)) store.CardTypeInput {
		in := h100("X")
		f(&in)
		return in
	}
	invalid := []struct {
		name   string
		in     store.CardTypeInput
		fields map[string]string
	}{
		{"no name", mod(func(in *store.CardTypeInput) { in.Name = " " }), map[string]string{"name": "field.required"}},
		{"long name", mod(func(in *store.CardTypeInput) { in.Name = strings.Repeat("n", 101) }), map[string]string{"name": "field.too_long"}},
		{"no memory", mod(func(in *store.CardTypeInput) { in.VRAMGiB = 0 }), map[string]string{"vram_gib": "cardtype.vram_range"}},
		{"too much memory", mod(func(in *store.CardTypeInput) { in.VRAMGiB = 4097 }), map[string]string{"vram_gib": "cardtype.vram_range"}},
		{"negative tflops", mod(func(in *store.CardTypeInput) { in.TFLOPSFP16 = -1 }), map[string]string{"tflops_fp16": "cardtype.tflops_range"}},
		{"no tflops at all", mod(func(in *store.CardTypeInput) {
			in.TFLOPSFP32, in.TFLOPSTF32, in.TFLOPSBF16, in.TFLOPSFP16, in.TFLOPSFP8, in.TFLOPSINT8 = 0, 0, 0, 0, 0, 0
		}), map[string]string{"tflops_bf16": "cardtype.tflops_none"}},
		{"free", mod(func(in *store.CardTypeInput) { in.PriceFen = 0 }), map[string]string{"price": "cardtype.price_range"}},
		{"absurd price", mod(func(in *store.CardTypeInput) { in.PriceFen = 100_000_001 }), map[string]string{"price": "cardtype.price_range"}},
	}
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		ct := MustCardType(t, st, "H800")
		MustCardType(t, st, "A800")
		before := storetest.MustCounts(t, st)
		for _, c := range invalid {
			t.Run(c.name, func(t *testing.T) {
				got, err := st.CreateCardType(ctx, c.in)
				if got != nil {
					t.Errorf("created %+v", got)
				}
				e := storetest.AssertCode(t, err, errs.Invalid, "")
				assertFields(t, e.Fields, c.fields)
				_, err = st.UpdateCardType(ctx, ct.ID, c.in)
				e = storetest.AssertCode(t, err, errs.Invalid, "")
				assertFields(t, e.Fields, c.fields)
			})
		}
		_, err := st.CreateCardType(ctx, h100("h800"))
		e := storetest.AssertCode(t, err, errs.Conflict, "cardtype.name_taken")
		assertFields(t, e.Fields, map[string]string{"name": "cardtype.name_taken"})
		_, err = st.UpdateCardType(ctx, ct.ID, h100("A800"))
		storetest.AssertCode(t, err, errs.Conflict, "cardtype.name_taken")
		_, err = st.UpdateCardType(ctx, 999, h100("B200"))
		storetest.AssertCode(t, err, errs.NotFound, "cardtype.not_found")
		err = st.DeleteCardType(ctx, 999)
		storetest.AssertCode(t, err, errs.NotFound, "cardtype.not_found")
		_, err = st.FindCardTypeByName(context.Background(), "B200")
		storetest.AssertCode(t, err, errs.NotFound, "cardtype.not_found")
		storetest.AssertUnchanged(t, st, before)

		// A type some card uses stays.
		host := MustHost(t, st, "gpu-01")
		MustCard(t, st, "GPU-00000000-0000-0000-0000-000000000001", 0, host.ID, ct.ID)
		before = storetest.MustCounts(t, st)
		err = st.DeleteCardType(ctx, ct.ID)
		storetest.AssertCode(t, err, errs.Conflict, "cardtype.in_use")
		storetest.AssertUnchanged(t, st, before)
		if _, err := st.FindCardTypeByID(ctx, ct.ID); err != nil {
			t.Errorf("card type in use is gone: %v", err)
		}
	})
}
