package notifytest

import (
	"crypto/hmac"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"cardhour/notify"
)

// Feishu stands in for a Feishu custom bot with 签名校验 when secret is set.
// It answers as open.feishu.cn/open-apis/bot/v2/hook/<token> does: HTTP 200
// and a code (see notify/feishu.go for the sources).
type Feishu struct {
	*receiver
	token, secret string
}

// NewFeishu starts a bot limited to Feishu's 100 messages a minute.
func NewFeishu(tb testing.TB, secret string) *Feishu {
	tb.Helper()
	f := &Feishu{token: randomHex(4) + "-" + randomHex(2) + "-" + randomHex(2) + "-" + randomHex(6), secret: secret}
	f.receiver = newReceiver(tb, f, 100)
	return f
}

// URL is the webhook URL to configure, hook token included.
func (f *Feishu) URL() string { return f.srv.URL + "/open-apis/bot/v2/hook/" + f.token }

func feishuErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"code": code, "msg": msg, "data": map[string]any{}})
}

func (f *Feishu) ok(w http.ResponseWriter) { feishuErr(w, 0, "success") }

func (f *Feishu) rateLimited(w http.ResponseWriter) {
	feishuErr(w, notify.FeishuFreqLimited, "frequency limited psm[lark.oapi.app_platform_runtime]appID[1]")
}

func (f *Feishu) check(w http.ResponseWriter, r *http.Request, body []byte) (Received, bool) {
	token, found := strings.CutPrefix(r.URL.Path, "/open-apis/bot/v2/hook/")
	switch {
	case !found:
		http.NotFound(w, r)
		return Received{}, false
	case r.Method != http.MethodPost:
		http.Error(w, "404 page not found", http.StatusNotFound)
		return Received{}, false
	case token != f.token:
		feishuErr(w, 19001, "param invalid: incoming webhook access token invalid")
		return Received{}, false
	case !isJSON(r):
		feishuErr(w, 9499, "Bad Request")
		return Received{}, false
	}
	var msg struct {
		Timestamp string `json:"timestamp"`
		Sign      string `json:"sign"`
		MsgType   string `json:"msg_type"`
		Content   struct {
			Text string                       `json:"text"`
			Post map[string]notify.FeishuPost `json:"post"`
		} `json:"content"`
	}
	if json.Unmarshal(body, &msg) != nil {
		feishuErr(w, 9499, "Bad Request")
		return Received{}, false
	}
	if f.secret != "" {
		ts, err := strconv.ParseInt(msg.Timestamp, 10, 64)
		if err != nil || !within(time.Unix(ts, 0), time.Hour) ||
			!hmac.Equal([]byte(msg.Sign), []byte(feishuWant(msg.Timestamp, f.secret))) {
			feishuErr(w, notify.FeishuSignFails, "sign match fail or timestamp is not within one hour from current time")
			return Received{}, false
		}
	}
	switch msg.MsgType {
	case "text":
		if msg.Content.Text == "" {
			feishuErr(w, 9499, "Bad Request")
			return Received{}, false
		}
		return Received{Text: msg.Content.Text}, true
	case "post":
		return readPost(w, msg.Content.Post)
	case "image", "share_chat", "interactive":
		return Received{}, true
	default:
		feishuErr(w, 19002, "params error, msg_type need")
		return Received{}, false
	}
}

// readPost reads a rich-text message as the client shows it: its title, its
// paragraphs one a line, and the first link.
func readPost(w http.ResponseWriter, post map[string]notify.FeishuPost) (Received, bool) {
	for _, lang := range []string{"zh_cn", "en_us", "ja_jp"} {
		p, ok := post[lang]
		if !ok {
			continue
		}
		got := Received{Title: p.Title, Lang: lang}
		var lines []string
		for _, para := range p.Content {
			var line strings.Builder
			for _, el := range para {
				switch el.Tag {
				case "text":
					line.WriteString(el.Text)
				case "a":
					if el.Href == "" {
						feishuErr(w, 9499, "Bad Request")
						return Received{}, false
					}
					line.WriteString(el.Text)
					if got.Link == "" {
						got.Link, got.Label = el.Href, el.Text
					}
				case "at", "img":
				default:
					feishuErr(w, 9499, "Bad Request")
					return Received{}, false
				}
			}
			lines = append(lines, line.String())
		}
		if len(lines) == 0 {
			feishuErr(w, 9499, "Bad Request")
			return Received{}, false
		}
		got.Text = strings.Join(lines, "\n")
		return got, true
	}
	feishuErr(w, 9499, "Bad Request")
	return Received{}, false
}
