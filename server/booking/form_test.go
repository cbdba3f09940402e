package booking_test

// Tests of what the booking form chooses and says for a task: the card
// type it starts on, which type it calls the cheapest, and the warning when
// the cards asked for do not hold the task's VRAM.

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/schedule"
	"cardhour/store"
)

// bkfWorld adds to bkpWorld two cheaper card types — L40S, for which the
// team holds no quota, and H20, for which it does — and a 133 GiB task that
// prefers the H800.
type bkfWorld struct {
	*bkpWorld
	l40s, h20 int64
	bigTask   int64
}

func bkfSetup(t *testing.T) *bkfWorld {
	t.Helper()
	w := &bkfWorld{bkpWorld: bkpSetup(t)}
	ctx := w.e.AdminCtx()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Per hour for 133 GiB with a tenth kept free: L40S 4 × ¥4 = ¥16,
	// H20 2 × ¥9 = ¥18, H800 2 × ¥12 = ¥24.
	l40s, err := w.e.St.CreateCardType(ctx, store.CardTypeInput{Name: "L40S", VRAMGiB: 48, TFLOPSBF16: 362, PriceFen: 400})
	must(err)
	h20, err := w.e.St.CreateCardType(ctx, store.CardTypeInput{Name: "H20", VRAMGiB: 96, TFLOPSBF16: 148, PriceFen: 900})
	must(err)
	w.l40s, w.h20 = l40s.ID, h20.ID
	now := time.Now()
	_, err = w.e.St.CreateQuota(ctx, store.QuotaInput{TeamID: w.teamID, CardTypeID: h20.ID, CardHours: 500,
		ValidFrom: now.Add(-24 * time.Hour), ExpiresAt: now.Add(60 * 24 * time.Hour)})
	must(err)
	big, err := w.e.St.CreateTask(ctx, store.TaskInput{TeamID: w.teamID, Name: "70B 全参微调", Priority: schedule.Normal, EstimateCardHours: 200,
		DataReadiness: schedule.DataReady, VRAMGiB: 133, Precision: "bf16", CardTypeIDs: []int64{w.typeID}})
	must(err)
	w.bigTask = big.ID
	return w
}

// TestBookingFormStartsOnThePreferredTypeAndBadgesABookableCheapest: the
// form starts on the task's preferred H800 (not the cheaper H20), with the
// count that holds it; the "cheapest" badge is on H20, the cheapest type
// the team holds a quota for, not on L40S, which it cannot book.
func TestBookingFormStartsOnThePreferredTypeAndBadgesABookableCheapest(t *testing.T) {
	t.Parallel()
	w := bkfSetup(t)
	c := w.e.LoggedIn(store.RoleMember)
	r := c.Get("/booking/new?task=" + strconv.FormatInt(w.bigTask, 10))
	bkpWant(t, r, http.StatusOK, "GET /booking/new")
	doc := r.Doc(t)
	if got := doc.Find(`[data-testid=card-type-radio][checked]`).AttrOr("value", ""); got != strconv.FormatInt(w.typeID, 10) {
		t.Errorf("the form starts on card type %s, want the task's preferred H800 (%d)", got, w.typeID)
	}
	if got := doc.Find(`#f-count`).AttrOr("value", ""); got != "2" {
		t.Errorf("the count starts at %s, want the 2 H800 that hold 133 GiB", got)
	}
	badged := doc.Find(`[data-testid=fit-cheapest]`)
	if badged.Length() != 1 {
		t.Fatalf("%d types badged cheapest, want 1", badged.Length())
	}
	if got := badged.Closest(`[data-testid=fit-row]`).AttrOr("data-id", ""); got != strconv.FormatInt(w.h20, 10) {
		t.Errorf("the cheapest badge is on type %s, want H20 (%d): L40S (%d) has no quota", got, w.h20, w.l40s)
	}
}

// TestBookingFormWarnsWhenTheCardsDoNotHoldTheTasksVRAM: one 80 GiB card
// for a 133 GiB task is warned about on the form and on the preview, with
// the count schedule's sizing asks for; two cards are not.
func TestBookingFormWarnsWhenTheCardsDoNotHoldTheTasksVRAM(t *testing.T) {
	t.Parallel()
	w := bkfSetup(t)
	c := w.e.LoggedIn(store.RoleMember)
	task, h800 := strconv.FormatInt(w.bigTask, 10), strconv.FormatInt(w.typeID, 10)
	_, needed := schedule.HoldsVRAM(133, 80, 1, w.e.Cfg.Headroom)
	if needed != 2 {
		t.Fatalf("schedule sizes 133 GiB at %d × 80 GiB, the test expects 2", needed)
	}
	shown := func(q string) []string {
		t.Helper()
		r := c.Get("/booking/new?" + q)
		bkpWant(t, r, http.StatusOK, "GET /booking/new?"+q)
		var out []string
		r.Doc(t).Find(`[data-testid=vram-warning]`).Each(func(_ int, s *goquery.Selection) {
			if _, hidden := s.Attr("hidden"); !hidden {
				out = append(out, s.AttrOr("data-card-type", "")+": "+strings.TrimSpace(s.Text()))
			}
		})
		return out
	}
	want := h800 + ": " + bkpZH("bkform.vram_short", 2, "H800", 80, 10, "133.0")
	if got := shown("task=" + task + "&card_type=" + h800 + "&count=1"); len(got) != 1 || got[0] != want {
		t.Errorf("the form with 1 × H800 warns %q, want %q", got, want)
	}
	if got := shown("task=" + task + "&card_type=" + h800 + "&count=2"); len(got) != 0 {
		t.Errorf("the form with 2 × H800 warns %q", got)
	}

	start := time.Now().Add(2 * time.Hour).Truncate(time.Minute)
	preview := func(count int) *goquery.Document {
		t.Helper()
		v := w.window(w.bigTask, count, start, start.Add(2*time.Hour))
		r := c.PostForm("/booking/preview", v, true)
		bkpWant(t, r, http.StatusOK, "preview "+strconv.Itoa(count)+" × H800")
		return r.Doc(t)
	}
	if got, want := bkpText(preview(1), "[data-testid=preview-vram-short]"), bkpZH("bkpreview.vram_short", 1, 80, "133.0", 10, 2); got != want {
		t.Errorf("the preview of 1 × H800 warns %q, want %q", got, want)
	}
	if n := preview(2).Find("[data-testid=preview-vram-short]").Length(); n != 0 {
		t.Errorf("the preview of 2 × H800 warns about VRAM")
	}
}
