// Package bookingview builds the booking preview — what a request costs
// and does before it is made: card-hours × price, the quota left after
// it, free cards, the VRAM warning — for every area that books (the
// booking form, a template's use), so that both show the same page by
// the same rules.
package bookingview

import (
	"context"
	"net/url"

	"cardhour/schedule"
	"cardhour/store"
	"cardhour/web"
)

// Preview is the page's props for pv, a request of count cards for the
// task (as the caller describes it), posted to action when confirmed.
// headroom is the VRAM share each card keeps free (CARDHOUR_HEADROOM).
func Preview(ctx context.Context, st *store.Store, pv *store.BookingPreview, task web.TaskBrief, count int, headroom float64, action string) (web.BookingPreviewProps, error) {
	v := web.BookingPreviewProps{
		Task: task, CardTypeName: pv.CardType.Name, Count: count, Start: pv.Start, End: pv.End, Kind: pv.Kind,
		CardHours: schedule.CardHours(pv.CardSeconds), PriceFen: pv.CardType.PriceFen, CostFen: pv.CostFen, QuotaOverride: pv.QuotaOverride,
		FreeCards: pv.FreeCards, TotalCards: pv.TotalCards, Placed: pv.Placed, Preempts: pv.Preempts, WaitReason: pv.WaitReason,
		Action: action,
	}
	v.OverEstimate = v.CardHours > v.Task.RemainingHours+1e-9
	// The sizing rule of the booking form's warning (schedule's).
	if ok, needed := schedule.HoldsVRAM(v.Task.VRAMGiB, pv.CardType.VRAMGiB, count, headroom); !ok && needed > 0 {
		v.VRAMNeeded, v.CardVRAMGiB, v.HeadroomPct = needed, pv.CardType.VRAMGiB, int(headroom*100+0.5)
	}
	start := pv.Start
	quotas, err := st.FindQuotas(ctx, store.QuotaFilter{TeamIDs: []int64{pv.Task.TeamID}, CardTypeID: pv.CardType.ID, ActiveAt: &start})
	if err != nil {
		return v, err
	}
	if len(quotas) > 0 {
		q := quotas[0]
		v.HasQuota, v.QuotaLeftHours, v.QuotaExpires = true, q.RemainingHour, q.ExpiresAt
		v.QuotaAfterHours = q.RemainingHour - v.CardHours
	}
	return v, nil
}

// KeepForm carries the form's filled fields through the preview: as hidden
// inputs of its confirm button, and as the query of the link back to the
// form (returned) so that "change" reopens it filled in.
func KeepForm(v *web.BookingPreviewProps, f web.Form, fields []string) url.Values {
	back := url.Values{}
	for _, k := range fields {
		if val := f.Value(k); val != "" {
			v.Hidden = append(v.Hidden, web.Hidden{Name: k, Value: val})
			back.Set(k, val)
		}
	}
	return back
}
