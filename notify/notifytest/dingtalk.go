package notifytest

import (
	"crypto/hmac"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"cardhour/notify"
)

// DingTalk stands in for a DingTalk custom robot with the 加签 setting when
// secret is set. It answers as oapi.dingtalk.com/robot/send does: HTTP 200
// and an errcode (see notify/dingtalk.go for the sources).
type DingTalk struct {
	*receiver
	token, secret string
}

// NewDingTalk starts a robot limited to DingTalk's 20 messages a minute.
func NewDingTalk(tb testing.TB, secret string) *DingTalk {
	tb.Helper()
	d := &DingTalk{token: "dt-token-" + randomHex(8), secret: secret}
	d.receiver = newReceiver(tb, d, 20)
	return d
}

// URL is the webhook URL to configure, access_token included.
func (d *DingTalk) URL() string { return d.srv.URL + "/robot/send?access_token=" + d.token }

func dingTalkErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"errcode": code, "errmsg": msg})
}

func (d *DingTalk) ok(w http.ResponseWriter) { dingTalkErr(w, 0, "ok") }

func (d *DingTalk) rateLimited(w http.ResponseWriter) {
	dingTalkErr(w, notify.DingTalkTooFast, "send too fast, exceed 20 times per minute")
}

func (d *DingTalk) check(w http.ResponseWriter, r *http.Request, body []byte) (Received, bool) {
	q := r.URL.Query()
	switch {
	case r.URL.Path != "/robot/send":
		http.NotFound(w, r)
		return Received{}, false
	case r.Method != http.MethodPost:
		dingTalkErr(w, 43002, "需要POST请求")
		return Received{}, false
	case q.Get("access_token") != d.token:
		dingTalkErr(w, 300001, "token is not exist")
		return Received{}, false
	case !isJSON(r):
		dingTalkErr(w, 43004, "无效的HTTP HEADER Content-Type")
		return Received{}, false
	}
	if d.secret != "" {
		ts, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
		if err != nil || !within(time.UnixMilli(ts), time.Hour) {
			dingTalkErr(w, notify.DingTalkSignFails, "invalid timestamp")
			return Received{}, false
		}
		want := dingTalkWant(q.Get("timestamp"), d.secret)
		if !hmac.Equal([]byte(q.Get("sign")), []byte(want)) {
			dingTalkErr(w, notify.DingTalkSignFails, "sign not match, more: [https://open.dingtalk.com/document/robots/customize-robot-security-settings]")
			return Received{}, false
		}
	}
	var msg struct {
		MsgType  string `json:"msgtype"`
		Markdown *struct {
			Title string `json:"title"`
			Text  string `json:"text"`
		} `json:"markdown"`
		Text *struct {
			Content string `json:"content"`
		} `json:"text"`
	}
	if json.Unmarshal(body, &msg) != nil {
		dingTalkErr(w, 40035, "缺少参数 json")
		return Received{}, false
	}
	switch msg.MsgType {
	case "markdown":
		if msg.Markdown == nil || msg.Markdown.Title == "" || msg.Markdown.Text == "" {
			dingTalkErr(w, 40035, "缺少参数 markdown")
			return Received{}, false
		}
		label, href := firstLink(msg.Markdown.Text)
		return Received{Title: msg.Markdown.Title, Text: msg.Markdown.Text, Link: href, Label: label}, true
	case "text":
		if msg.Text == nil || msg.Text.Content == "" {
			dingTalkErr(w, 40035, "缺少参数 text")
			return Received{}, false
		}
		return Received{Text: msg.Text.Content}, true
	case "link", "actionCard", "feedCard":
		return Received{}, true
	default:
		dingTalkErr(w, 40035, "不支持的消息类型 msgtype")
		return Received{}, false
	}
}
