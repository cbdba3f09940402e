package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browser is one headless Chromium with a fresh profile, and the page
// problems (JavaScript exceptions, console errors, CSP refusals) it saw.
type browser struct {
	t       *testing.T
	ctx     context.Context
	prefix  string // of screenshot names
	shots   int
	mu      sync.Mutex
	console []string
}

func newBrowser(t *testing.T, prefix string) *browser {
	t.Helper()
	return newBrowserWithin(t, prefix, 3*time.Minute)
}

// newBrowserWithin is newBrowser for a walk that may take up to limit: one
// through many pages at several widths.
func newBrowserWithin(t *testing.T, prefix string, limit time.Duration) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromePath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1366, 900),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		// The browser of a user in China: the portal reads Accept-Language
		// on a first visit, and headless Chromium would say en-US.
		chromedp.Flag("accept-lang", "zh-CN,zh"),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	// A bound on the whole walk, so a selector that never appears fails the
	// test instead of hanging it until go test's own timeout.
	ctx, cancelTimeout := context.WithTimeout(ctx, limit)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	b := &browser{t: t, ctx: ctx, prefix: prefix}

	// Start the browser and subscribe before the first page loads.
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("start Chromium (%s): %v", chromePath, err)
	}
	// Headless Chromium takes the window size as the outer size; the page
	// itself gets 1366×900, a common laptop screen, so screenshots show
	// what such a user sees above the fold.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatalf("set the viewport: %v", err)
	}
	entries := chromedp.Events(ctx, cdplog.EntryAdded)
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if e := ev.Entry; e != nil && e.Level == cdplog.EntryLevelError {
				b.note(fmt.Sprintf("%s: %s (%s)", e.Source, e.Text, e.URL))
			}
		}
	}()
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			if d := ev.ExceptionDetails; d != nil {
				msg := d.Text
				if d.Exception != nil && d.Exception.Description != "" {
					msg += " " + d.Exception.Description
				}
				b.note(fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber+1))
			}
		}
	}()
	return b
}

func (b *browser) note(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.console = append(b.console, s)
}

// problems returns what the pages reported since the last call.
func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.console
	b.console = nil
	return p
}

// do runs steps; on failure it keeps a screenshot of where it stopped.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

func (b *browser) fail(what string, err error) {
	b.t.Helper()
	// A fresh bound: the walk's own context may be what ran out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), 10*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if png, serr := chromedp.Run(ctx, chromedp.FullScreenshot(100)); serr == nil {
		name := filepath.Join(artifactDir(b.t), b.prefix+"-FAILED.png")
		_ = os.WriteFile(name, png, 0o644)
		b.t.Logf("screenshot of the failure: %s", name)
	}
	b.t.Fatalf("%s (at %s): %v", what, loc, err)
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fail("read "+sel, err)
	}
	return strings.TrimSpace(s)
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		b.fail("count "+sel, err)
	}
	return n
}

func (b *browser) htmlLang() string {
	b.t.Helper()
	l, err := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.documentElement.lang"))
	if err != nil {
		b.fail("read <html lang>", err)
	}
	return l
}

// screenshot saves the whole page as artifacts/<prefix>-NN-<name>.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.fail("screenshot "+name, err)
	}
	b.shots++
	path := filepath.Join(artifactDir(b.t), fmt.Sprintf("%s-%02d-%s.png", b.prefix, b.shots, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// fill types each value into the input with id f-<field>, as a person would.
func (b *browser) fill(values [][2]string) {
	b.t.Helper()
	var steps []chromedp.Action[chromedp.Void]
	for _, kv := range values {
		sel := chromedp.CSS("#f-" + kv[0])
		steps = append(steps, chromedp.WaitVisible(sel), chromedp.Clear(sel), chromedp.SendKeys(sel, kv[1]))
	}
	b.do("fill the form", steps...)
}

// removeShots deletes the screenshots of an earlier run of prefix, so the
// artifacts show only this run.
func removeShots(t *testing.T, prefix string) {
	old, _ := filepath.Glob(filepath.Join(artifactDir(t), prefix+"-*.png"))
	for _, f := range old {
		_ = os.Remove(f)
	}
}
