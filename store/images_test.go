package store_test

import (
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestImageLifecycle(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(epoch)
		st := storetest.MustOpenWith(t, dialect, store.Options{Now: clock.Now})
		ctx := asActor()

		n := auditCount(t, st)
		img, err := st.CreateImage(ctx, store.ImageInput{Name: " pytorch-2.4-cu124 ", Reference: " registry.example.cn/ml/pytorch:2.4.1-cuda12.4 ",
			CUDAVersion: "12.4", Frameworks: "PyTorch 2.4, DeepSpeed 0.15", Description: "训练与微调通用镜像"})
		if err != nil {
			t.Fatal(err)
		}
		if img.Name != "pytorch-2.4-cu124" || img.Reference != "registry.example.cn/ml/pytorch:2.4.1-cuda12.4" || !img.CreatedAt.Equal(clock.Now()) {
			t.Errorf("created %+v", img)
		}
		_, after := wantAudit(t, st, n, "create", "image", img.ID, false, true)
		if after["cuda_version"] != "12.4" {
			t.Errorf("audit after = %v", after)
		}
		got, err := st.FindImageByID(ctx, img.ID)
		if err != nil || *got != *img {
			t.Errorf("FindImageByID = %+v, %v; want %+v", got, err, img)
		}

		clock.Advance(60e9)
		n = auditCount(t, st)
		up, err := st.UpdateImage(ctx, img.ID, store.ImageInput{Name: "pytorch-2.5-cu124", Reference: "registry.example.cn/ml/pytorch:2.5.0-cuda12.4"})
		if err != nil {
			t.Fatal(err)
		}
		if up.Name != "pytorch-2.5-cu124" || up.CUDAVersion != "" || up.Description != "" || !up.UpdatedAt.Equal(clock.Now()) {
			t.Errorf("updated %+v", up)
		}
		b, a := wantAudit(t, st, n, "update", "image", img.ID, true, true)
		if b["name"] != "pytorch-2.4-cu124" || a["name"] != "pytorch-2.5-cu124" {
			t.Errorf("audit name %v -> %v", b["name"], a["name"])
		}

		if _, err := st.CreateImage(ctx, store.ImageInput{Name: "megatron", Reference: "r/megatron:0.8"}); err != nil {
			t.Fatal(err)
		}
		all, err := st.FindImages(ctx)
		if err != nil || len(all) != 2 || all[0].Name != "megatron" {
			t.Errorf("FindImages = %+v, %v; want by name", all, err)
		}

		n = auditCount(t, st)
		if err := st.DeleteImage(ctx, img.ID); err != nil {
			t.Fatal(err)
		}
		wantAudit(t, st, n, "delete", "image", img.ID, true, false)
		_, err = st.FindImageByID(ctx, img.ID)
		storetest.AssertCode(t, err, errs.NotFound, "image.not_found")
	})
}

func TestImageRefusals(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		img, err := st.CreateImage(ctx, store.ImageInput{Name: "vllm", Reference: "r/vllm:0.6"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateImage(ctx, store.ImageInput{Name: "sglang", Reference: "r/sglang:0.3"}); err != nil {
			t.Fatal(err)
		}
		before := storetest.MustCounts(t, st)
		for _, c := range []struct {
			name   string
			in     store.ImageInput
			fields map[string]string
		}{
			{"nothing", store.ImageInput{}, map[string]string{"name": "field.required", "reference": "field.required"}},
			{"space in reference", store.ImageInput{Name: "x", Reference: "r/x: latest"}, map[string]string{"reference": "image.reference_invalid"}},
			{"long reference", store.ImageInput{Name: "x", Reference: strings.Repeat("r", 256)}, map[string]string{"reference": "field.too_long"}},
			{"long name", store.ImageInput{Name: strings.Repeat("n", 101), Reference: "r/x"}, map[string]string{"name": "field.too_long"}},
			{"long cuda version", store.ImageInput{Name: "x", Reference: "r/x", CUDAVersion: strings.Repeat("1", 33)}, map[string]string{"cuda_version": "field.too_long"}},
			{"long frameworks", store.ImageInput{Name: "x", Reference: "r/x", Frameworks: strings.Repeat("f", 256)}, map[string]string{"frameworks": "field.too_long"}},
			{"long description", store.ImageInput{Name: "x", Reference: "r/x", Description: strings.Repeat("述", 501)}, map[string]string{"description": "field.too_long"}},
		} {
			_, err := st.CreateImage(ctx, c.in)
			e := storetest.AssertCode(t, err, errs.Invalid, "")
			assertFields(t, e.Fields, c.fields)
			_, err = st.UpdateImage(ctx, img.ID, c.in)
			e = storetest.AssertCode(t, err, errs.Invalid, "")
			assertFields(t, e.Fields, c.fields)
		}
		_, err = st.CreateImage(ctx, store.ImageInput{Name: "VLLM", Reference: "r/other"})
		e := storetest.AssertCode(t, err, errs.Conflict, "image.name_taken")
		assertFields(t, e.Fields, map[string]string{"name": "image.name_taken"})
		_, err = st.UpdateImage(ctx, img.ID, store.ImageInput{Name: "sglang", Reference: "r/x"})
		storetest.AssertCode(t, err, errs.Conflict, "image.name_taken")
		_, err = st.UpdateImage(ctx, 999, store.ImageInput{Name: "x", Reference: "r/x"})
		storetest.AssertCode(t, err, errs.NotFound, "image.not_found")
		err = st.DeleteImage(ctx, 999)
		storetest.AssertCode(t, err, errs.NotFound, "image.not_found")
		storetest.AssertUnchanged(t, st, before)
	})
}
