package response

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// CSVText is a text cell of a CSV download as it must be written: every
// CSV writer passes user text (task, team and user names, notes, units)
// through it. Excel, WPS and LibreOffice run a cell that begins with =, +,
// -, @, a tab or a carriage return as a formula — a note such as
// =HYPERLINK("http://…?"&A1) would send the sheet's data away when the
// manager opens the report — so such a cell gets a leading single quote,
// as OWASP recommends, and shows as the text it was. The full-width forms
// (＝＋－＠) are included: spreadsheet programs in Chinese and Japanese
// locales take them for the ASCII ones. A plain number (-12.5, +3) is
// left as it is: it cannot run anything and should stay a number.
// The portal's own numeric columns are written from numbers and never
// pass through here.
func CSVText(s string) string {
	first, _ := utf8.DecodeRuneInString(s)
	if s == "" || !strings.ContainsRune(formulaStarts, first) {
		return s
	}
	if plainNumber.MatchString(s) {
		return s
	}
	return "'" + s
}

const formulaStarts = "=+-@\t\r＝＋－＠"

var plainNumber = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)
