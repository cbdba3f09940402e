package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"cardhour/store"
)

// A member keeps a task's script versioned, in the browser: uploads it,
// edits it twice, compares versions 1 and 3, rolls back to 1, and sees
// four versions — nothing lost, the old content latest again.
func TestMemberVersionsAScriptInTheBrowser(t *testing.T) {
	requireBrowser(t)
	p := startPortal(t, "files", nil)
	removeShots(t, "files")
	b := newBrowser(t, "files")
	testid := func(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }
	eval := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err != nil {
			b.fail(what, err)
		}
	}
	v1 := "#!/usr/bin/env bash\n# 7B 续训：8×H800\nset -euo pipefail\ntorchrun --nproc_per_node=8 train.py \\\n  --lr 1e-4 \\\n  --save-every 500\n"
	script := filepath.Join(t.TempDir(), "train.sh")
	if err := os.WriteFile(script, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}

	b.do("open /login", chromedp.Navigate(p.URL+"/login"), chromedp.WaitVisible(testid("login-form")))
	b.fill([][2]string{{"username", "lihua"}, {"password", store.DemoPassword}})
	b.do("log in as the member lihua", chromedp.Click(testid("login-submit")), chromedp.WaitVisible(testid("nav-booking")))

	// 1. From the task page to its files, and upload the script.
	b.do("open the task", chromedp.Navigate(p.URL+"/tasks/1"), chromedp.WaitVisible(testid("task-files")))
	b.do("open its files", chromedp.Click(testid("task-files")), chromedp.WaitVisible(testid("upload-form")))
	b.do("choose the script", chromedp.SetUploadFiles(chromedp.CSS("#f-file"), []string{script}))
	b.fill([][2]string{{"path", "scripts/train.sh"}, {"message", "首个版本：8 卡续训"}})
	b.screenshot("upload")
	b.do("upload", chromedp.Click(testid("upload-submit")), chromedp.WaitVisible(testid("file-content")))
	if v := b.attr(`[data-testid="file-content"]`, "data-version"); v != "1" {
		t.Fatalf("after the upload the page shows version %q, want 1", v)
	}
	if got := b.text(`[data-testid="file-lines"]`); !strings.Contains(got, "--lr 1e-4") {
		t.Errorf("the uploaded script shows as:\n%s", got)
	}

	// 2. Two edits in the browser.
	edit := func(what, from, to, msg, wantVersion string) {
		t.Helper()
		b.do("open the editor for "+what, chromedp.Click(testid("file-edit")), chromedp.WaitVisible(testid("edit-form")))
		eval("change the text: "+what, fmt.Sprintf(`const ta = document.querySelector('#f-content');
			if (!ta.value.includes(%q)) throw new Error('text not found');
			ta.value = ta.value.replace(%q, %q); true`, from, from, to))
		b.fill([][2]string{{"message", msg}})
		b.do("save "+what, chromedp.Click(testid("edit-submit")), chromedp.WaitVisible(testid("file-content")))
		if v := b.attr(`[data-testid="file-content"]`, "data-version"); v != wantVersion {
			t.Fatalf("after %s the page shows version %q, want %s (flash: %s)", what, v, wantVersion, b.text(`[data-testid="flash"]`))
		}
	}
	edit("the learning rate", "--lr 1e-4", "--lr 3e-4", "学习率改为 3e-4", "2")
	b.screenshot("edited-once")
	edit("the checkpoints", "  --save-every 500\n", "  --save-every 200 \\\n  --grad-accum 4\n", "更频繁保存检查点", "3")

	// 3. Versions 1 and 3 side by side.
	eval("choose versions 1 and 3", `document.querySelector('#f-from').value = '1';
		document.querySelector('#f-to').value = '3'; true`)
	b.do("show the diff", chromedp.Click(chromedp.CSS(`[data-testid="diff-form"] [data-testid="diff-submit"]`)), chromedp.WaitVisible(testid("diff")))
	if from, to := b.attr(`[data-testid="diff"]`, "data-from"), b.attr(`[data-testid="diff"]`, "data-to"); from != "1" || to != "3" {
		t.Errorf("the diff compares %s → %s, want 1 → 3", from, to)
	}
	removed := b.text(`[data-testid="diff-lines"] tr[data-kind="-"]`)
	added, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="diff-lines"] tr[data-kind="+"] .fl-tx')].map(e => e.textContent.trim()).join("|")`))
	if !strings.Contains(removed, "--lr 1e-4") || !strings.Contains(added, "--lr 3e-4") || !strings.Contains(added, "--grad-accum 4") {
		t.Errorf("diff 1→3: removed %q, added %q", removed, added)
	}
	if a, r := b.attr(`[data-testid="diff"]`, "data-added"), b.attr(`[data-testid="diff"]`, "data-removed"); a != "3" || r != "2" {
		t.Errorf("diff 1→3 counts +%s −%s, want +3 −2", a, r)
	}
	b.screenshot("diff-1-3")

	// 4. Roll back to version 1: a fourth version with version 1's content.
	b.do("back to the file", chromedp.Click(testid("back-to-file")), chromedp.WaitVisible(testid("versions-table")))
	eval("accept confirmations", `window.confirm = () => true; true`)
	b.do("roll back to version 1", chromedp.Click(chromedp.CSS(`[data-testid="rollback"][data-version="1"]`)), chromedp.WaitVisible(testid("flash")))
	if n := b.count(`[data-testid="version-row"]`); n != 4 {
		t.Errorf("after the rollback the history has %d versions, want 4", n)
	}
	if v := b.attr(`[data-testid="file-content"]`, "data-version"); v != "4" {
		t.Errorf("after the rollback the page shows version %q, want 4", v)
	}
	if got := b.text(`[data-testid="file-lines"]`); !strings.Contains(got, "--lr 1e-4") || strings.Contains(got, "grad-accum") {
		t.Errorf("version 4 is not version 1's content:\n%s", got)
	}
	if src := b.text(`[data-testid="version-row"][data-version="4"] [data-testid="file-source"]`); !regexp.MustCompile(`v1`).MatchString(src) {
		t.Errorf("version 4 says %q, want it rolled back from v1", src)
	}
	b.screenshot("rolled-back")

	// 5. The same page in English, and the task's generated plan.
	b.do("switch to English", chromedp.Click(testid("lang-switch")), chromedp.WaitVisible(testid("versions-table")))
	if l := b.htmlLang(); l != "en" {
		t.Errorf("after the switch <html lang=%q>", l)
	}
	if !strings.Contains(b.text(`[data-testid="versions-table"]`), "rolled back from v1") {
		t.Errorf("English history: %s", b.text(`[data-testid="versions-table"]`))
	}
	b.screenshot("history-en")
	b.do("open the files list", chromedp.Click(testid("crumb-files")), chromedp.WaitVisible(testid("files-table")))
	b.screenshot("files-en")

	for _, pr := range pageProblems(b.problems()) {
		t.Errorf("the browser reported: %s", pr)
	}
}
