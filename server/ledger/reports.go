package ledger

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

// reportScope is whose figures the viewer's reports hold: every team for
// admins, the teams they manage for managers.
func (a *Area) reportScope(c echo.Context) (store.ReportScope, error) {
	u := request.User(c)
	if u.Role == store.RoleAdmin {
		return store.ReportScope{}, nil
	}
	ids, err := a.Store.ManagedTeamIDs(c.Request().Context(), u)
	if ids == nil {
		ids = []int64{}
	}
	return store.ReportScope{TeamIDs: ids}, err
}

// pageTeam reads ?team= (an id) against the scope: one of the viewer's
// teams narrows the report; any other value is reported and ignored.
func pageTeam(c echo.Context, sc *store.ReportScope) (team, problem string) {
	raw := strings.TrimSpace(c.QueryParam("team"))
	if raw == "" {
		return "", ""
	}
	id := request.ID(raw)
	if id == 0 || !scope.Sees(sc.TeamIDs, id) {
		return "", web.T(request.Lang(c), "team.not_found")
	}
	sc.TeamID = id
	return raw, ""
}

// reportsIndex sends managers and admins to this month's report, and tells
// everyone else that reports are for managers and where their own rounds are.
func (a *Area) reportsIndex(c echo.Context) error {
	if store.RoleRank(request.User(c).Role) >= store.RoleRank(store.RoleManager) {
		return c.Redirect(http.StatusSeeOther, "/reports/monthly")
	}
	return response.Render(c, http.StatusOK, web.ReportsIndexPage(a.Pages.Page(c, "nav.reports", "reports")))
}

// pageScope is a report page's scope narrowed by ?team=, that team's name,
// and the first problem: the period's (given) or the team's.
func (a *Area) pageScope(c echo.Context, problem string) (store.ReportScope, string, string, error) {
	sc, err := a.reportScope(c)
	if err != nil {
		return sc, "", problem, err
	}
	team, teamProblem := pageTeam(c, &sc)
	if problem == "" {
		problem = teamProblem
	}
	return sc, team, problem, nil
}

// reportPage is a report page's frame: its title from titleKey and the
// period, the problem as its message unless one is already there.
func (a *Area) reportPage(c echo.Context, nameKey, problem, titleKey, period string) web.Page {
	p := a.Pages.Page(c, nameKey, "reports")
	p.Title = web.T(p.Lang, titleKey, period)
	if problem != "" && p.Flash == "" {
		p.Flash = problem
	}
	return p
}

// monthlyReportPage is the monthly report.
func (a *Area) monthlyReportPage(c echo.Context) error {
	month, problem, err := a.ledgerMonth(c)
	if err != nil {
		return err
	}
	sc, team, problem, err := a.pageScope(c, problem)
	if err != nil {
		return err
	}
	rep, err := a.Store.MonthlyReport(c.Request().Context(), a.Config.TZ, month, sc)
	if err != nil {
		return err
	}
	opts, err := a.teamOptions(c, sc.TeamIDs)
	if err != nil {
		return err
	}
	p := a.reportPage(c, "report.monthly", problem, "report.monthly_title", month)
	return response.Render(c, http.StatusOK, web.MonthlyReportPage(p, monthlyProps(p.Lang, rep, team, opts)))
}

// reportYear reads ?year=, this year when absent; one that does not parse
// is reported and this year shown instead.
func (a *Area) reportYear(c echo.Context) (year int, problem string) {
	this := time.Now().In(a.Config.TZ).Year()
	raw := strings.TrimSpace(c.QueryParam("year"))
	if raw == "" {
		return this, ""
	}
	y, err := strconv.Atoi(raw)
	if err != nil || y < 2000 || y > 9999 {
		return this, web.T(request.Lang(c), "report.year_invalid")
	}
	return y, ""
}

// yearlyReportPage is the yearly baseline.
func (a *Area) yearlyReportPage(c echo.Context) error {
	year, problem := a.reportYear(c)
	sc, team, problem, err := a.pageScope(c, problem)
	if err != nil {
		return err
	}
	rep, err := a.Store.YearlyBaseline(c.Request().Context(), a.Config.TZ, year, sc)
	if err != nil {
		return err
	}
	opts, err := a.teamOptions(c, sc.TeamIDs)
	if err != nil {
		return err
	}
	p := a.reportPage(c, "report.yearly", problem, "report.yearly_title", strconv.Itoa(year))
	return response.Render(c, http.StatusOK, web.YearlyReportPage(p, yearlyProps(p.Lang, rep, team, opts)))
}

// apiReportScope is the API's scope: ?team= by name or id must be one of
// the caller's teams (not found otherwise).
func (a *Area) apiReportScope(c echo.Context, v *errs.Validation) (store.ReportScope, error) {
	sc, err := a.reportScope(c)
	if err != nil {
		return sc, err
	}
	team, err := request.TeamID(c.Request().Context(), a.Store, request.QueryRef(c, "team"), "team", v)
	if err != nil {
		return sc, err
	}
	if team != 0 {
		if !scope.Sees(sc.TeamIDs, team) {
			return sc, errs.E(errs.NotFound, "server.apiReportScope", "team.not_found")
		}
		sc.TeamID = team
	}
	return sc, nil
}

// reportFormat reads ?format= and ?section=.
func reportFormat(c echo.Context, v *errs.Validation) (format, section string) {
	format = strings.ToLower(strings.TrimSpace(c.QueryParam("format")))
	switch format {
	case "":
		format = "json"
	case "json", "csv", "xlsx":
	default:
		v.Add("format", "report.format_invalid")
	}
	return format, strings.TrimSpace(c.QueryParam("section"))
}

// apiMonthlyReport answers the monthly report as JSON, CSV or XLSX.
func (a *Area) apiMonthlyReport(c echo.Context) error {
	v := errs.NewValidation("server.apiMonthlyReport")
	month := strings.TrimSpace(c.QueryParam("month"))
	if month == "" {
		month = a.thisMonth()
	} else if _, _, err := store.MonthBounds(month, a.Config.TZ); err != nil {
		v.Add("month", "report.month_invalid")
	}
	format, section := reportFormat(c, v)
	sc, err := a.apiReportScope(c, v)
	if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	if err := a.Store.CatchUpLedger(c.Request().Context(), a.Config.TZ); err != nil {
		return err
	}
	rep, err := a.Store.MonthlyReport(c.Request().Context(), a.Config.TZ, month, sc)
	if err != nil {
		return err
	}
	if format == "json" {
		return c.JSON(http.StatusOK, rep)
	}
	return a.writeExport(c, format, section, "cardhour-monthly-"+month, monthlyTables(request.Lang(c), rep))
}

// apiYearlyReport answers the yearly baseline as JSON, CSV or XLSX.
func (a *Area) apiYearlyReport(c echo.Context) error {
	v := errs.NewValidation("server.apiYearlyReport")
	year := time.Now().In(a.Config.TZ).Year()
	if raw := strings.TrimSpace(c.QueryParam("year")); raw != "" {
		y, err := strconv.Atoi(raw)
		if err != nil || y < 2000 || y > 9999 {
			v.Add("year", "report.year_invalid")
		}
		year = y
	}
	format, section := reportFormat(c, v)
	sc, err := a.apiReportScope(c, v)
	if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	rep, err := a.Store.YearlyBaseline(c.Request().Context(), a.Config.TZ, year, sc)
	if err != nil {
		return err
	}
	if format == "json" {
		return c.JSON(http.StatusOK, rep)
	}
	return a.writeExport(c, format, section, "cardhour-yearly-"+strconv.Itoa(year), yearlyTables(request.Lang(c), rep))
}
