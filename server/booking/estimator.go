package booking

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var estimatorFields = []string{"params_b", "precision", "workload", "batch", "context", "layers", "hidden", "kv_ratio"}

var estimatorWorkloads = []string{schedule.WorkInference, schedule.WorkLoRA, schedule.WorkFull}

// estimatorInput reads the query; every value that does not parse or is
// out of range is named next to its input.
func estimatorInput(f web.Form) (schedule.VRAMInput, error) {
	v := errs.NewValidation("server.estimatorInput")
	in := schedule.VRAMInput{Precision: f.Value("precision"), Workload: f.Value("workload")}
	if x, ok := request.Float(f.Value("params_b"), v, "params_b"); ok {
		in.ParamsB = x
		v.Check(x > 0 && x <= 10000, "params_b", "estimator.params_range")
	} else if strings.TrimSpace(f.Value("params_b")) == "" {
		v.Add("params_b", "field.required")
	}
	v.Check(slices.Contains(store.TaskPrecisions, in.Precision), "precision", "task.precision_invalid")
	v.Check(slices.Contains(estimatorWorkloads, in.Workload), "workload", "estimator.workload_invalid")
	ints := []struct {
		field string
		dst   *int
		hi    int
	}{{"batch", &in.Batch, 1 << 16}, {"context", &in.Context, 1 << 24}, {"layers", &in.Layers, 10000}, {"hidden", &in.Hidden, 1 << 20}}
	for _, x := range ints {
		raw := strings.TrimSpace(f.Value(x.field))
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		switch {
		case err != nil:
			v.Add(x.field, "field.integer")
		case n < 0 || n > x.hi:
			v.Add(x.field, "estimator.int_range")
		default:
			*x.dst = n
		}
	}
	if x, ok := request.Float(f.Value("kv_ratio"), v, "kv_ratio"); ok {
		v.Check(x > 0 && x <= 1, "kv_ratio", "estimator.kv_range")
		in.KVHeadsRatio = x
	}
	return in, v.Err()
}

// estimatorPage is the VRAM estimator. It is a GET form so a result can be
// shared as a link; with no parameters it shows the form with defaults.
func (a *Area) estimatorPage(c echo.Context) error {
	lang := request.Lang(c)
	f := web.NewForm()
	q := c.QueryParams()
	for _, k := range estimatorFields {
		f.Values[k] = q.Get(k)
	}
	e := web.EstimatorProps{HeadroomPct: int(a.Config.Headroom*100 + 0.5)}
	for _, p := range store.TaskPrecisions {
		e.Precisions = append(e.Precisions, web.Option{Value: p, Label: p})
	}
	for _, w := range estimatorWorkloads {
		e.Workloads = append(e.Workloads, web.Option{Value: w, Label: web.T(lang, "estwork."+w)})
	}
	page := a.Pages.Page(c, "estimator.title", "booking")
	if f.Value("params_b") == "" && f.Value("workload") == "" {
		f.Values["precision"], f.Values["workload"] = "bf16", schedule.WorkInference
		f.Values["batch"], f.Values["context"] = "1", "4096"
		return response.Render(c, http.StatusOK, web.EstimatorPage(page, e, f))
	}
	in, err := estimatorInput(f)
	var est schedule.VRAMEstimate
	if err == nil {
		if est, err = schedule.EstimateVRAM(in); err != nil {
			err = &errs.Error{Code: errs.Invalid, Op: "server.estimatorPage", Key: "estimator.invalid", Err: err}
		}
	}
	if err != nil {
		if !response.FormFailed(lang, err, &f) {
			return err
		}
		return response.Render(c, response.StatusOf(err), web.EstimatorPage(page, e, f))
	}
	e.Done, e.TotalGiB, e.Layers, e.Hidden, e.Precision = true, est.TotalGiB, est.Layers, est.Hidden, in.Precision
	parts := []web.EstimatePart{
		{Part: "weights", GiB: est.WeightsGiB}, {Part: "kv_cache", GiB: est.KVCacheGiB}, {Part: "gradients", GiB: est.GradientsGiB},
		{Part: "optimizer", GiB: est.OptimizerGiB}, {Part: "activations", GiB: est.ActivationsGiB}, {Part: "overhead", GiB: est.OverheadGiB},
	}
	for _, p := range parts {
		if p.Part == "weights" || p.GiB > 0 {
			e.Parts = append(e.Parts, p)
		}
	}
	types, err := a.Store.FindCardTypes(c.Request().Context())
	if err != nil {
		return err
	}
	e.Fits, e.Unfit = a.cardFits(types, est.TotalGiB, in.Precision, nil, 0)
	// The task form takes the need rounded up to a tenth of a GiB, so the
	// task never asks for less than the estimate.
	need := math.Ceil(est.TotalGiB*10) / 10
	e.TaskURL = "/tasks/new?" + url.Values{"vram_gib": {strconv.FormatFloat(need, 'f', 1, 64)}, "precision": {in.Precision}}.Encode()
	return response.Render(c, http.StatusOK, web.EstimatorPage(page, e, f))
}
