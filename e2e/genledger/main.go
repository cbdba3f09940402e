// Command genledger builds the ledger's load data set in a cardhour
// database: a year of hourly rollups for every card of a 500-card fleet
// (≈ 4.4 M rows), 50,000 bookings that never overlap on a card (released
// early, preempted, extended, cancelled), their per-booking hours, the
// ledger rounds the ledger pass derives from them, and outputs. Then it
// times the monthly report in process, as the server builds it.
//
//	go run ./e2e/genledger -db sqlite:///tmp/ledger.db
//	go run ./e2e/genledger -db 'mysql://cardhour:cardhour@tcp(127.0.0.1:3306)/ledger'
//
// The database is migrated first; an empty one gets an admin account with
// -admin-password (default $CARDHOUR_ADMIN_PASSWORD). Point a portal at the
// same database afterwards and time it over HTTP with e2e/loadledger.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"cardhour/config"
	"cardhour/e2e/genledger/dataset"
	"cardhour/store"
)

func main() {
	var (
		db       = flag.String("db", "", "database as CARDHOUR_DB: sqlite:///path/file.db or mysql://user:pass@tcp(host:port)/db (default: a SQLite file in -data)")
		data     = flag.String("data", "ledger-data", "directory for the default SQLite file")
		adminPW  = flag.String("admin-password", os.Getenv("CARDHOUR_ADMIN_PASSWORD"), "admin password for an empty database")
		cards    = flag.Int("cards", 500, "cards in the fleet")
		bookings = flag.Int("bookings", 50_000, "bookings to place")
		days     = flag.Int("days", 365, "days of data")
		from     = flag.String("from", "", "first day, YYYY-MM-DD in -tz (default: 12 months before this month)")
		tz       = flag.String("tz", "Asia/Shanghai", "zone the months are cut in (the portal's CARDHOUR_TZ)")
		seed     = flag.Uint64("seed", 1, "random seed: the same seed builds the same data")
		month    = flag.String("month", "", "month to time, YYYY-MM (default: the last full month of the data)")
		runs     = flag.Int("runs", 9, "timed builds of the monthly report")
		jsonOut  = flag.Bool("json", false, "print the result as one JSON object")
	)
	flag.Parse()
	if err := run(*db, *data, *adminPW, *cards, *bookings, *days, *from, *tz, *seed, *month, *runs, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "genledger:", err)
		os.Exit(1)
	}
}

type result struct {
	Dialect string         `json:"dialect"`
	Stats   *dataset.Stats `json:"data"`
	Month   string         `json:"month"`
	Runs    int            `json:"runs"`
	Monthly timing         `json:"monthly_report"`
	Yearly  timing         `json:"yearly_baseline"`
	Rounds  int            `json:"month_rounds"`
	Outputs int            `json:"month_outputs"`
	Seconds float64        `json:"seconds"`
}

// timing is the spread of several timed runs, in milliseconds.
type timing struct {
	MedianMs float64 `json:"median_ms"`
	MinMs    float64 `json:"min_ms"`
	MaxMs    float64 `json:"max_ms"`
}

func timed(runs int, fn func() error) (timing, error) {
	var ds []float64
	for range runs {
		t0 := time.Now()
		if err := fn(); err != nil {
			return timing{}, err
		}
		ds = append(ds, float64(time.Since(t0).Microseconds())/1000)
	}
	sort.Float64s(ds)
	return timing{MedianMs: ds[len(ds)/2], MinMs: ds[0], MaxMs: ds[len(ds)-1]}, nil
}

func run(db, data, adminPW string, cards, bookings, days int, from, tz string, seed uint64, month string, runs int, jsonOut bool) error {
	ctx := context.Background()
	start := time.Now()
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return fmt.Errorf("-tz: %w", err)
	}
	if db == "" {
		db = "sqlite://" + filepath.Join(data, "cardhour.db")
	}
	target, err := config.ParseDB(db, data)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Options{Dialect: target.Dialect, DSN: target.DSN})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	if adminPW == "" {
		adminPW = "genledger-admin"
	}
	if _, err := st.EnsureAdmin(ctx, adminPW); err != nil {
		return err
	}
	spec := dataset.Spec{Cards: cards, Bookings: bookings, Days: days, Seed: seed, Zone: loc}
	if from != "" {
		t, err := time.ParseInLocation(time.DateOnly, from, loc)
		if err != nil {
			return fmt.Errorf("-from: %w", err)
		}
		spec.From = t
	}
	last := ""
	spec.Progress = func(stage string, done, total int) {
		if jsonOut {
			return
		}
		if stage != last {
			if last != "" {
				fmt.Fprintln(os.Stderr)
			}
			last = stage
		}
		fmt.Fprintf(os.Stderr, "\r%-14s %d/%d", stage, done, total)
	}
	stats, err := dataset.Generate(ctx, st, spec)
	if !jsonOut {
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		return err
	}
	if month == "" {
		month = store.AddMonths(store.MonthOf(stats.To, loc), -1)
	}
	res := result{Dialect: target.Dialect, Stats: stats, Month: month, Runs: runs}
	var rep *store.MonthlyReport
	if res.Monthly, err = timed(runs, func() error {
		rep, err = st.MonthlyReport(ctx, loc, month, store.ReportScope{})
		return err
	}); err != nil {
		return err
	}
	res.Rounds, res.Outputs = rep.Totals.Rounds, len(rep.Entries)
	year, _ := time.Parse("2006-01", month)
	if res.Yearly, err = timed(max(1, runs/3), func() error {
		_, err := st.YearlyBaseline(ctx, loc, year.Year(), store.ReportScope{})
		return err
	}); err != nil {
		return err
	}
	res.Seconds = time.Since(start).Seconds()
	if jsonOut {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("genledger: %s, %s – %s (%s)\n", target.Dialect, stats.From.In(loc).Format(time.DateOnly), stats.To.In(loc).Format(time.DateOnly), tz)
	fmt.Printf("  cards %d, bookings %d (%d card assignments), hour rollups %d, booking hours %d, rounds %d, outputs %d\n",
		stats.Cards, stats.Bookings, stats.BookingCards, stats.HourRows, stats.BookingHourRows, stats.Rounds, stats.Outputs)
	names := make([]string, 0, len(stats.Stages))
	for k := range stats.Stages {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Printf("  %-14s %s\n", k, stats.Stages[k])
	}
	fmt.Printf("  monthly report %s: %d rounds, %d outputs; median %.1f ms (min %.1f, max %.1f) over %d runs\n",
		month, res.Rounds, res.Outputs, res.Monthly.MedianMs, res.Monthly.MinMs, res.Monthly.MaxMs, runs)
	fmt.Printf("  yearly baseline %d: median %.1f ms\n", year.Year(), res.Yearly.MedianMs)
	fmt.Printf("  total %.1f s\n", res.Seconds)
	return nil
}
