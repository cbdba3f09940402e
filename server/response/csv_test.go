package response_test

import (
	"testing"

	"cardhour/server/response"
)

func TestCSVTextNeutralisesFormulas(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "",
		"SFT 指令微调":                "SFT 指令微调",
		"=1+1":                    "'=1+1",
		"+1+1":                    "'+1+1",
		"-1+1":                    "'-1+1",
		"@SUM(A1)":                "'@SUM(A1)",
		"\t=1":                    "'\t=1",
		"\r=1":                    "'\r=1",
		"＝1+1":                    "'＝1+1",
		"－1":                      "'－1",
		"-12.5":                   "-12.5",
		"+3":                      "+3",
		"-1e3":                    "-1e3",
		"-.5":                     "-.5",
		"-":                       "'-",
		"-Inf":                    "'-Inf",
		"a=1":                     "a=1",
		"'already quoted":         "'already quoted",
		"=HYPERLINK(\"x\",\"y\")": "'=HYPERLINK(\"x\",\"y\")",
	} {
		if got := response.CSVText(in); got != want {
			t.Errorf("CSVText(%q) = %q, want %q", in, got, want)
		}
	}
}
