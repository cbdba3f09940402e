package planning

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
)

// Availability windows: two weeks by default, a month at most.
const (
	availabilityDefaultHours = 14 * 24
	availabilityMaxHours     = 31 * 24
)

// availabilityJSON is GET /api/v1/availability: per card type, its active
// cards and the free ones in each hour from From.
type availabilityJSON struct {
	From      time.Time            `json:"from"`
	Hours     int                  `json:"hours"`
	CardTypes []store.Availability `json:"card_types"`
}

func (a *Area) apiAvailability(c echo.Context) error {
	v := errs.NewValidation("server.apiAvailability")
	from := request.QueryTime(c, "from", v)
	hours := request.QueryInt(c, "hours", availabilityDefaultHours, 1, availabilityMaxHours, "api.hours_range", v)
	typeID, err := request.CardTypeID(c.Request().Context(), a.Store, request.QueryRef(c, "card_type"), "card_type", v)
	if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	if from.IsZero() {
		from = a.Store.Now()
	}
	all, err := a.Store.FindAvailability(c.Request().Context(), from, hours)
	if err != nil {
		return err
	}
	out := availabilityJSON{From: from.UTC().Truncate(time.Hour), Hours: hours, CardTypes: make([]store.Availability, 0, len(all))}
	for _, ct := range all {
		if typeID == 0 || ct.CardTypeID == typeID {
			out.CardTypes = append(out.CardTypes, ct)
		}
	}
	if typeID != 0 && len(out.CardTypes) == 0 {
		return &errs.Error{Code: errs.Invalid, Op: "server.apiAvailability", Key: "cardtype.not_found",
			Fields: map[string]string{"card_type": "cardtype.not_found"}}
	}
	return c.JSON(http.StatusOK, out)
}
