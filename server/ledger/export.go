package ledger

import (
	"bytes"
	"encoding/csv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/xuri/excelize/v2"

	"cardhour/errs"
	"cardhour/money"
	"cardhour/server/response"
)

// A report exports as tables, one per section: CSV writes them one after
// another (or one, with ?section=), XLSX one sheet each with numbers as
// numbers. The cell values carry their kind so each writer can format them.

// Column kinds.
const (
	colText  = iota // string
	colInt          // int or int64
	colHours        // float64 card-hours
	colYuan         // int64 fen, written as yuan
	colShare        // *float64 share 0–1, written as a per cent; nil is empty
	colNum          // float64 or *float64
	colTime         // time.Time, in the portal's zone
)

type exportCol struct {
	Title string
	Kind  int
}

type exportTable struct {
	Section string // the ?section= name
	Title   string // the CSV heading and sheet name
	Cols    []exportCol
	Rows    [][]any
}

// writeExport answers tables as CSV or XLSX, as a download named name.
func (a *Area) writeExport(c echo.Context, format, section, name string, tables []exportTable) error {
	if section != "" {
		var one []exportTable
		for _, t := range tables {
			if t.Section == section {
				one = append(one, t)
			}
		}
		if len(one) == 0 {
			keys := make([]string, len(tables))
			for i, t := range tables {
				keys[i] = t.Section
			}
			return &errs.Error{Code: errs.Invalid, Op: "server.writeExport", Key: "report.section_invalid",
				Args: []any{strings.Join(keys, ", ")}, Fields: map[string]string{"section": "report.section_invalid"}}
		}
		tables = one
		name += "-" + section
	}
	var body []byte
	var ctype string
	switch format {
	case "csv":
		var err error
		if body, err = exportCSV(tables, section != "", a.Config.TZ); err != nil {
			return errs.Internalf("server.writeExport", "csv: %w", err)
		}
		ctype = "text/csv; charset=utf-8"
		name += ".csv"
	default:
		var err error
		if body, err = exportXLSX(tables, a.Config.TZ); err != nil {
			return errs.Internalf("server.writeExport", "xlsx: %w", err)
		}
		ctype = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
		name += ".xlsx"
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, ctype, body)
}

// csvCell writes a value as text: hours to two decimals, yuan to the fen,
// shares as per cents with one decimal, text neutralised so that no cell
// runs as a formula (response.CSVText).
func csvCell(kind int, v any, loc *time.Location) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return response.CSVText(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		if kind == colYuan {
			return money.Fen(x).Plain()
		}
		return strconv.FormatInt(x, 10)
	case float64:
		if kind == colHours {
			return strconv.FormatFloat(x, 'f', 2, 64)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case *float64:
		if x == nil || math.IsNaN(*x) || math.IsInf(*x, 0) {
			return ""
		}
		if kind == colShare {
			return strconv.FormatFloat(math.Round(*x*1000)/10, 'f', -1, 64)
		}
		return strconv.FormatFloat(math.Round(*x*10000)/10000, 'f', -1, 64)
	case time.Time:
		if x.IsZero() {
			return ""
		}
		return x.In(loc).Format("2006-01-02 15:04")
	}
	return ""
}

// exportCSV writes the tables. Excel reads UTF-8 only after a byte-order
// mark, and the headings and names are Chinese, so the file starts with one.
// Several tables are separated by a blank line, each under its title; a
// single section is one plain table.
func exportCSV(tables []exportTable, plain bool, loc *time.Location) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("\uFEFF")
	w := csv.NewWriter(&buf)
	for i, t := range tables {
		if !plain {
			if i > 0 {
				if err := w.Write([]string{}); err != nil {
					return nil, err
				}
			}
			if err := w.Write([]string{"# " + t.Title}); err != nil {
				return nil, err
			}
		}
		head := make([]string, len(t.Cols))
		for j, col := range t.Cols {
			head[j] = col.Title
		}
		if err := w.Write(head); err != nil {
			return nil, err
		}
		for _, r := range t.Rows {
			rec := make([]string, len(t.Cols))
			for j, col := range t.Cols {
				rec[j] = csvCell(col.Kind, r[j], loc)
			}
			if err := w.Write(rec); err != nil {
				return nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// sheetName makes a title a valid, unique sheet name: at most 31
// characters, none of : \ / ? * [ ].
func sheetName(title string, used map[string]bool) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`:\/?*[]`, r) {
			return '-'
		}
		return r
	}, title)
	if r := []rune(name); len(r) > 31 {
		name = string(r[:31])
	}
	for n := 2; used[strings.ToLower(name)]; n++ {
		suffix := " " + strconv.Itoa(n)
		r := []rune(name)
		name = string(r[:min(len(r), 31-len(suffix))]) + suffix
	}
	used[strings.ToLower(name)] = true
	return name
}

// exportXLSX writes one sheet per table: a bold, frozen header row, then
// cells typed as numbers (hours and yuan with two decimals, shares as per
// cents) or text.
func exportXLSX(tables []exportTable, loc *time.Location) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"E8EEF2"}}})
	if err != nil {
		return nil, err
	}
	twoDec, err := f.NewStyle(&excelize.Style{NumFmt: 4}) // #,##0.00
	if err != nil {
		return nil, err
	}
	pctFmt := "0.0%"
	pct, err := f.NewStyle(&excelize.Style{CustomNumFmt: &pctFmt})
	if err != nil {
		return nil, err
	}
	ratioFmt := "#,##0.0###"
	ratio, err := f.NewStyle(&excelize.Style{CustomNumFmt: &ratioFmt})
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	first := ""
	for _, t := range tables {
		name := sheetName(t.Title, used)
		if _, err := f.NewSheet(name); err != nil {
			return nil, err
		}
		if first == "" {
			first = name
		}
		for j, col := range t.Cols {
			cell, _ := excelize.CoordinatesToCellName(j+1, 1)
			if err := f.SetCellValue(name, cell, col.Title); err != nil {
				return nil, err
			}
			width := float64(max(10, min(40, len([]rune(col.Title))*2+2)))
			colName, _ := excelize.ColumnNumberToName(j + 1)
			if err := f.SetColWidth(name, colName, colName, width); err != nil {
				return nil, err
			}
		}
		last, _ := excelize.CoordinatesToCellName(len(t.Cols), 1)
		if err := f.SetCellStyle(name, "A1", last, bold); err != nil {
			return nil, err
		}
		for i, r := range t.Rows {
			for j, col := range t.Cols {
				cell, _ := excelize.CoordinatesToCellName(j+1, i+2)
				v, style := xlsxValue(col.Kind, r[j], loc)
				if v == nil {
					continue
				}
				if err := f.SetCellValue(name, cell, v); err != nil {
					return nil, err
				}
				switch style {
				case colHours, colYuan:
					err = f.SetCellStyle(name, cell, cell, twoDec)
				case colShare:
					err = f.SetCellStyle(name, cell, cell, pct)
				case colNum:
					err = f.SetCellStyle(name, cell, cell, ratio)
				}
				if err != nil {
					return nil, err
				}
			}
		}
		if err := f.SetPanes(name, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
			return nil, err
		}
	}
	if first != "" {
		if err := f.DeleteSheet("Sheet1"); err != nil {
			return nil, err
		}
		idx, err := f.GetSheetIndex(first)
		if err != nil {
			return nil, err
		}
		f.SetActiveSheet(idx)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// xlsxValue is what a cell holds: a number for the numeric kinds (yuan from
// fen, a share as a fraction), text otherwise; and the style it needs.
func xlsxValue(kind int, v any, loc *time.Location) (any, int) {
	switch x := v.(type) {
	case nil:
		return nil, colText
	case string:
		return x, colText
	case int:
		return x, colInt
	case int64:
		if kind == colYuan {
			return float64(x) / 100, colYuan
		}
		return x, colInt
	case float64:
		if kind == colHours {
			return math.Round(x*100) / 100, colHours
		}
		return x, colNum
	case *float64:
		if x == nil || math.IsNaN(*x) || math.IsInf(*x, 0) {
			return nil, colText
		}
		if kind == colShare {
			return *x, colShare
		}
		return *x, colNum
	case time.Time:
		if x.IsZero() {
			return nil, colText
		}
		return x.In(loc).Format("2006-01-02 15:04"), colText
	}
	return nil, colText
}
