package web_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cardhour/web"
)

// keyUses finds message keys where code hands them to the catalogue: coded
// errors, validation checks, and T calls in Go and templ files.
var keyUses = []*regexp.Regexp{
	regexp.MustCompile(`Key:\s*"([a-z0-9_.]+)"`),
	regexp.MustCompile(`errs\.E\([^,]+,\s*[^,]+,\s*"([a-z0-9_.]+)"`),
	regexp.MustCompile(`\.(?:Check|Add)\((?:[^\n]*?,\s*)?"[a-z0-9_]+",\s*"([a-z0-9_.]+)"\)`),
	regexp.MustCompile(`fieldErr\([^,]+,\s*"[a-z0-9_]+",\s*"([a-z0-9_.]+)"\)`),
	regexp.MustCompile(`notify\([^\n]*?"(notify\.[a-z_]+)"`),
	regexp.MustCompile(`(?:withKey|nameTaken|inUse)\([^,]+,\s*"([a-z0-9_.]+)"\)`),
	regexp.MustCompile(`\bT\((?:[a-zA-Z.]+,\s*)?"([a-z0-9_]+\.[a-z0-9_.]+)"`),
	regexp.MustCompile(`"([a-z0-9_]+\.[a-z0-9_]+)"\s*:\s*"([a-z0-9_]+\.[a-z0-9_.]+)"`),
	regexp.MustCompile(`(?:auditMsg|argKey)\("([a-z0-9_]+\.[a-z0-9_.]+)"[,)]`),
}

// auditedNames finds what the store writes to the audit log as codes: the
// action and the kind of record of each audit call, and the actions chosen
// into a variable first.
var auditedNames = []*regexp.Regexp{
	regexp.MustCompile(`(?:\.audit|\.auditNoted|RecordEvent)\(ctx, (?:tx, )?"([a-z_]+)", "([a-z_]+)"`),
	regexp.MustCompile(`(?:\.audit|\.auditNoted)\(ctx, tx, action, "([a-z_]+)"`),
	regexp.MustCompile(`\baction(?:, summary)? :?= "([a-z_]+)"`),
}

// TestEveryAuditedCodeHasALabel: the audit log shows each action and kind
// of record in the reader's language, so each needs a message.
func TestEveryAuditedCodeHasALabel(t *testing.T) {
	seen := 0
	for _, root := range []string{"../store", "../server"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, re := range auditedNames {
				for _, m := range re.FindAllStringSubmatch(string(src), -1) {
					seen++
					switch {
					case i == 0:
						checkLabel(t, path, "audit.act."+m[1])
						checkLabel(t, path, "entity."+m[2])
					case i == 1:
						checkLabel(t, path, "entity."+m[1])
					default:
						checkLabel(t, path, "audit.act."+m[1])
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen < 40 {
		t.Fatalf("found only %d audit calls; the scan patterns no longer match the code", seen)
	}
}

func checkLabel(t *testing.T, path, key string) {
	t.Helper()
	if !web.HasKey(key) {
		t.Errorf("%s audits a code without a label: add %q to the catalogue", path, key)
	}
}

func TestEveryUsedKeyIsTranslated(t *testing.T) {
	roots := []string{"../store", "../server", "../errs", "."}
	seen := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasSuffix(path, "_templ.go") || strings.HasSuffix(path, "_test.go") ||
				!(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".templ")) {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, re := range keyUses {
				for _, m := range re.FindAllStringSubmatch(string(src), -1) {
					key := m[len(m)-1]
					seen++
					if !web.HasKey(key) {
						t.Errorf("%s uses message key %q, which the catalogue lacks", path, key)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen < 50 {
		t.Fatalf("found only %d key uses; the scan patterns no longer match the code", seen)
	}
}

func TestBothLanguagesAreFilled(t *testing.T) {
	for _, k := range web.Keys() {
		zh, en := web.T(web.LangZH, k), web.T(web.LangEN, k)
		if strings.TrimSpace(zh) == "" || strings.TrimSpace(en) == "" {
			t.Errorf("key %q has an empty translation", k)
		}
		if strings.Count(zh, "%") != strings.Count(en, "%") {
			t.Errorf("key %q: zh and en take different arguments: %q / %q", k, zh, en)
		}
	}
}

func TestNoKeyIsDefinedTwice(t *testing.T) {
	if d := web.DuplicateKeys(); len(d) > 0 {
		t.Errorf("keys defined in more than one file: %v", d)
	}
}

func TestNormalizeLang(t *testing.T) {
	for in, want := range map[string]string{"": "zh-CN", "en": "en", "en-US": "en", "zh": "zh-CN", "zh-TW": "zh-CN", "fr": "zh-CN"} {
		if got := web.NormalizeLang(in, web.LangZH); got != want {
			t.Errorf("NormalizeLang(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAcceptLanguage(t *testing.T) {
	for in, want := range map[string]string{
		"": "zh-CN", "en": "en", "en-US,en;q=0.9": "en", "zh": "zh-CN", "zh-CN": "zh-CN", "zh-Hans": "zh-CN",
		"en;q=0.3, zh-Hans;q=0.7": "zh-CN", "fr, en;q=0.5": "en", "fr, de": "zh-CN", "*": "zh-CN", "en;q=0": "zh-CN",
		"en;q=bad, zh": "zh-CN", "EN-gb": "en",
	} {
		if got := web.AcceptLanguage(in, web.LangZH); got != want {
			t.Errorf("AcceptLanguage(%q) = %q, want %q", in, got, want)
		}
	}
	if got := web.AcceptLanguage("fr", web.LangEN); got != web.LangEN {
		t.Errorf("AcceptLanguage(fr) with default en = %q", got)
	}
}
