package notifytest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"cardhour/notify"
)

// WeCom stands in for a WeCom group robot. The key in the URL is its only
// credential; it answers as qyapi.weixin.qq.com/cgi-bin/webhook/send does:
// HTTP 200 and an errcode (see notify/wecom.go for the sources).
type WeCom struct {
	*receiver
	key string
}

// NewWeCom starts a robot with key (a random one when empty), limited to
// WeCom's 20 messages a minute.
func NewWeCom(tb testing.TB, key string) *WeCom {
	tb.Helper()
	if key == "" {
		key = "wc-" + randomHex(8)
	}
	c := &WeCom{key: key}
	c.receiver = newReceiver(tb, c, 20)
	return c
}

// URL is the webhook URL to configure, key included.
func (c *WeCom) URL() string { return c.srv.URL + "/cgi-bin/webhook/send?key=" + c.key }

func weComErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"errcode": code, "errmsg": msg})
}

func (c *WeCom) ok(w http.ResponseWriter) { weComErr(w, 0, "ok") }

func (c *WeCom) rateLimited(w http.ResponseWriter) {
	weComErr(w, notify.WeComFreqLimit, "api freq out of limit, hint: [1700000000_1_abc], from ip: 127.0.0.1, more info at https://open.work.weixin.qq.com/devtool/query?e=45009")
}

func (c *WeCom) check(w http.ResponseWriter, r *http.Request, body []byte) (Received, bool) {
	switch {
	case r.URL.Path != "/cgi-bin/webhook/send":
		http.NotFound(w, r)
		return Received{}, false
	case r.URL.Query().Get("key") != c.key:
		weComErr(w, notify.WeComBadURL, "invalid webhook url, hint: [1700000000_1_abc], more info at https://open.work.weixin.qq.com/devtool/query?e=93000")
		return Received{}, false
	case r.Method != http.MethodPost:
		weComErr(w, 43002, "require POST method")
		return Received{}, false
	}
	var msg struct {
		MsgType  string `json:"msgtype"`
		Markdown *struct {
			Content string `json:"content"`
		} `json:"markdown"`
		Text *struct {
			Content string `json:"content"`
		} `json:"text"`
	}
	if json.Unmarshal(body, &msg) != nil {
		weComErr(w, 40000, "invalid json")
		return Received{}, false
	}
	switch msg.MsgType {
	case "markdown":
		if msg.Markdown == nil || msg.Markdown.Content == "" {
			weComErr(w, 41009, "missing markdown content")
			return Received{}, false
		}
		content := msg.Markdown.Content
		if len(content) > notify.WeComMaxContent || !utf8.ValidString(content) {
			weComErr(w, notify.WeComTooLong, "markdown.content exceed max length 4096")
			return Received{}, false
		}
		label, href := firstLink(content)
		title, _, _ := strings.Cut(content, "\n")
		title = strings.Trim(strings.TrimLeft(title, "# "), "*")
		return Received{Title: title, Text: content, Link: href, Label: label}, true
	case "text":
		if msg.Text == nil || msg.Text.Content == "" {
			weComErr(w, 41009, "missing text content")
			return Received{}, false
		}
		return Received{Text: msg.Text.Content}, true
	case "markdown_v2", "image", "news", "file", "voice", "template_card":
		return Received{}, true
	default:
		weComErr(w, 40008, "invalid message type")
		return Received{}, false
	}
}
