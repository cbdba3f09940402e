package planning_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// TestTemplateUseShowsTheCostFirstAndLeavesNoOrphanTask: using a template
// first shows the cost (card-hours × price, the quota, the free cards) and
// writes nothing; confirming creates the task and its booking. A use the
// booking rules refuse — no capacity, over quota — is said on the template
// page, and leaves neither a booking nor a task behind.
func TestTemplateUseShowsTheCostFirstAndLeavesNoOrphanTask(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	ctx := context.Background()
	member := store.WithActor(ctx, store.Actor{UserID: e.Users[store.RoleMember].ID, Username: e.Users[store.RoleMember].Username})
	tpl, err := e.St.CreateTemplateFromTask(member, store.TemplateInput{Name: "两卡三小时", TaskID: w.coreTask.ID, CardTypeID: w.h800.ID, Count: 2, Duration: 3 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	counts := func() (tasks, bookings int) {
		t.Helper()
		ts, err := e.St.FindTasks(ctx, store.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		bs, err := e.St.FindBookings(ctx, store.BookingFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(ts), len(bs)
	}
	c := e.LoggedIn(store.RoleMember)
	path := fmt.Sprintf("/templates/%d", tpl.ID)
	if got := c.Get(path).Doc(t).Find(`[data-testid=template-use-form]`).AttrOr("action", ""); got != path+"/preview" {
		t.Errorf("the use form posts to %q, want the preview %s/preview", got, path)
	}

	// The preview: 2 cards × 3 h × ¥22 = ¥132, and nothing written.
	tasks0, bookings0 := counts()
	start := e.plnTomorrowAt(10)
	r := c.PostForm(path+"/preview", url.Values{"name": {"预训练-第二轮"}, "start": {e.plnLocal(start)}}, true)
	plnStatus(t, r, http.StatusOK, "preview the template's use")
	doc := r.Doc(t)
	if fen := doc.Find(`[data-testid=preview-cost]`).AttrOr("data-fen", ""); fen != "13200" {
		t.Errorf("the preview costs %s fen, want 13200 (2 cards × 3 h × ¥22)", fen)
	}
	if got := doc.Find(`[data-testid=preview-quota]`).Text(); !regexp.MustCompile(`500\.0.*494\.0`).MatchString(got) {
		t.Errorf("the preview's quota line %q, want 500.0 left and 494.0 after", got)
	}
	if tk, bk := counts(); tk != tasks0 || bk != bookings0 {
		t.Fatalf("the preview wrote %d tasks and %d bookings", tk-tasks0, bk-bookings0)
	}
	confirm := doc.Find(`[data-testid=booking-confirm-form]`)
	if got := confirm.AttrOr("action", ""); got != path+"/use" {
		t.Fatalf("the confirm form posts to %q, want %s/use", got, path)
	}
	if href := doc.Find(`[data-testid=booking-edit]`).AttrOr("href", ""); !regexp.MustCompile(`^` + path + `\?.*name=`).MatchString(href) {
		t.Errorf("change links %q, want the template with the form's values", href)
	}
	v := url.Values{}
	confirm.Find(`input[type=hidden]`).Each(func(_ int, s *goquery.Selection) {
		if name := s.AttrOr("name", ""); name != "_csrf" {
			v.Set(name, s.AttrOr("value", ""))
		}
	})
	r = c.PostForm(path+"/use", v, true)
	plnStatus(t, r, http.StatusSeeOther, "confirm the template's use")
	if tk, bk := counts(); tk != tasks0+1 || bk != bookings0+1 {
		t.Errorf("confirming made %d tasks and %d bookings, want one of each", tk-tasks0, bk-bookings0)
	}
	id, _ := strconv.ParseInt(regexp.MustCompile(`\d+$`).FindString(r.Header.Get("Location")), 10, 64)
	if b, err := e.St.FindBookingByID(ctx, id); err != nil || b.TaskName != "预训练-第二轮" || b.CardCount != 2 || !b.StartAt.Equal(start) {
		t.Errorf("the booking made: %+v, %v", b, err)
	}

	// Refused uses: the page says why, and no task is left without its booking.
	refused := func(what string, tplID int64, name string, start time.Time, key string, args ...any) {
		t.Helper()
		tasks, bookings := counts()
		for _, step := range []string{"preview", "use"} {
			r := c.PostForm(fmt.Sprintf("/templates/%d/%s", tplID, step), url.Values{"name": {name}, "start": {e.plnLocal(start)}}, true)
			plnStatus(t, r, http.StatusConflict, what+": "+step)
			if got, want := r.Doc(t).Find(`[data-testid=form-error]`).Text(), web.T(web.LangZH, key, args...); got != want {
				t.Errorf("%s: %s says %q, want %q", what, step, got, want)
			}
			if tk, bk := counts(); tk != tasks || bk != bookings {
				t.Errorf("%s: the refused %s left %d tasks and %d bookings", what, step, tk-tasks, bk-bookings)
			}
		}
	}
	// Another team holds three of the four cards: two are not free.
	later := e.plnTomorrowAt(10).Add(24 * time.Hour)
	if _, err := e.St.CreateBooking(w.ctx, store.BookingRequest{TaskID: w.plainTask.ID, CardTypeID: w.h800.ID, Count: 3,
		Start: later, End: later.Add(4 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	refused("no capacity", tpl.ID, "预训练-第三轮", later, "booking.no_capacity", 2, 1)

	// Four cards for 130 hours are 520 card-hours of a 500 card-hour quota.
	big, err := e.St.CreateTemplateFromTask(member, store.TemplateInput{Name: "四卡五天", TaskID: w.coreTask.ID, CardTypeID: w.h800.ID, Count: 4, Duration: 130 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r = c.PostForm(fmt.Sprintf("/templates/%d/preview", big.ID), url.Values{"name": {"预训练-长跑"}, "start": {e.plnLocal(later.Add(6 * time.Hour))}}, true)
	plnStatus(t, r, http.StatusConflict, "preview over the quota")
	quotaMsg := r.Doc(t).Find(`[data-testid=form-error]`).Text()
	if quotaMsg == "" {
		t.Fatalf("the over-quota preview says nothing")
	}
	tasks, bookings := counts()
	r = c.PostForm(fmt.Sprintf("/templates/%d/use", big.ID), url.Values{"name": {"预训练-长跑"}, "start": {e.plnLocal(later.Add(6 * time.Hour))}}, true)
	plnStatus(t, r, http.StatusConflict, "use over the quota")
	if got := r.Doc(t).Find(`[data-testid=form-error]`).Text(); got != quotaMsg {
		t.Errorf("the over-quota use says %q, the preview %q", got, quotaMsg)
	}
	if tk, bk := counts(); tk != tasks || bk != bookings {
		t.Errorf("the over-quota use left %d tasks and %d bookings", tk-tasks, bk-bookings)
	}
}
