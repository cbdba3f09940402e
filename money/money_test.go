package money_test

import (
	"testing"

	"cardhour/money"
)

func TestParseYuan(t *testing.T) {
	cases := []struct {
		in   string
		want money.Fen
		ok   bool
	}{
		{"12", 1200, true},
		{"12.5", 1250, true},
		{"12.50", 1250, true},
		{"0.01", 1, true},
		{".5", 50, true},
		{"1,234.56", 123456, true},
		{"¥8", 800, true},
		{"-3.2", -320, true},
		{"", 0, false},
		{"12.345", 0, false},
		{"12.", 0, false},
		{"abc", 0, false},
		{"1e3", 0, false},
	}
	for _, c := range cases {
		got, err := money.ParseYuan(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseYuan(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestYuanRoundTrips(t *testing.T) {
	for _, f := range []money.Fen{0, 1, 99, 100, 123456, 100000000, -250} {
		back, err := money.ParseYuan(f.Yuan())
		if err != nil || back != f {
			t.Errorf("%d -> %q -> %d, %v", f, f.Yuan(), back, err)
		}
	}
	if got := money.Fen(123456789).Yuan(); got != "1,234,567.89" {
		t.Errorf("Yuan() = %q", got)
	}
}
