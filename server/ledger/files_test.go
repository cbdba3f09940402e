package ledger_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/schedule"
	"cardhour/server/servertest"
	"cardhour/store"
)

// TestRoundLinksTheFileVersionsItRanWith: a script saved before a booking
// began is the version the round ran with; one saved after is not. The
// round page links the first and not the second.
func TestRoundLinksTheFileVersionsItRanWith(t *testing.T) {
	e := servertest.New(t, servertest.Options{})
	admin, member := ledgerActor(e.Users[store.RoleAdmin]), ledgerActor(e.Users[store.RoleMember])
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	team, err := e.St.CreateTeam(admin, store.TeamInput{Name: "版本组"})
	must(err)
	_, err = e.St.SetMembership(admin, team.ID, e.Users[store.RoleMember].ID, store.TeamRoleMember)
	must(err)
	ct, err := e.St.CreateCardType(admin, store.CardTypeInput{Name: "H20", VRAMGiB: 96, TFLOPSBF16: 148, PriceFen: 900})
	must(err)
	host, err := e.St.CreateHost(admin, store.HostInput{Name: "gpu-v1"})
	must(err)
	_, err = e.St.CreateCard(admin, store.CardInput{UUID: "GPU-30000001-aaaa-bbbb-cccc-000000000001", HostID: host.ID, CardTypeID: ct.ID})
	must(err)
	now := time.Now()
	_, err = e.St.CreateQuota(admin, store.QuotaInput{TeamID: team.ID, CardTypeID: ct.ID, CardHours: 10, ValidFrom: now.Add(-time.Hour), ExpiresAt: now.Add(24 * time.Hour)})
	must(err)
	task, err := e.St.CreateTask(member, store.TaskInput{TeamID: team.ID, Name: "版本轮", Priority: schedule.Normal, EstimateCardHours: 5, DataReadiness: schedule.DataReady})
	must(err)

	c := e.Client()
	put := func(content, message string) {
		t.Helper()
		h := http.Header{"Authorization": {"Bearer " + e.Users[store.RoleMember].Token}, "X-Message": {message}}
		r := c.Do(http.MethodPut, fmt.Sprintf("/api/v1/tasks/%d/files/scripts/train.sh", task.ID), strings.NewReader(content), h)
		if r.StatusCode != http.StatusCreated && r.StatusCode != http.StatusOK {
			t.Fatalf("PUT the script: %d %s", r.StatusCode, r)
		}
	}
	put("torchrun train.py --lr 1e-4\n", "v1")
	time.Sleep(10 * time.Millisecond)
	b, err := e.St.CreateBooking(member, store.BookingRequest{TaskID: task.ID, CardTypeID: ct.ID, Count: 1, Start: time.Now(), End: time.Now().Add(time.Hour)})
	must(err)
	time.Sleep(1100 * time.Millisecond)
	put("torchrun train.py --lr 3e-4\n", "v2, after the round began")
	_, err = e.St.ReleaseBooking(member, b.Booking.ID)
	must(err)

	r := c.Do(http.MethodGet, fmt.Sprintf("/ledger/rounds/%d", b.Booking.ID), nil,
		http.Header{"Cookie": {"cardhour_session=" + e.Session(store.RoleMember)}})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET the round: %d", r.StatusCode)
	}
	var links []string
	r.Doc(t).Find("a[href*='/files/show/']").Each(func(_ int, a *goquery.Selection) {
		links = append(links, a.AttrOr("href", ""))
	})
	// (The generated plan may be linked too; the script must be, at v1.)
	want := fmt.Sprintf("/tasks/%d/files/show/scripts/train.sh?version=1", task.ID)
	var scripts []string
	for _, l := range links {
		if strings.Contains(l, "/scripts/train.sh") {
			scripts = append(scripts, l)
		}
	}
	if len(scripts) != 1 || scripts[0] != want {
		t.Fatalf("the round links %q, want the script only as %q", links, want)
	}
}
