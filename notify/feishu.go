package notify

// Feishu / Lark custom bot (自定义机器人), as documented at
// https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot : POST
// JSON to https://open.feishu.cn/open-apis/bot/v2/hook/<token>; with "签名校验"
// the body carries "timestamp" (seconds, as a string) and
// sign = base64(HMAC-SHA256(key = timestamp+"\n"+secret, message = empty)),
// the timestamp within one hour of Feishu's clock (the doc's Go sample
// computes exactly this). Rich text is msg_type "post" with content.post
// .zh_cn|.en_us {title, content: [][]{tag: text|a|at|img}}. Answers are
// HTTP 200 with {"code":0,"msg":"success","data":{}}; 19021 "sign match
// fail or timestamp is not within one hour from current time", 19022 IP not
// allowed, 11232 frequency limited (100 a minute, 5 a second per bot).
// Older deployments answer {"StatusCode":0,"StatusMessage":"success"}; both
// shapes are read, as public clients do (e.g. the Go validateLarkResponse
// tests that accept either).

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// Feishu's answer codes the sender acts on.
const (
	FeishuOK          = 0
	FeishuFreqLimited = 11232
	FeishuSignFails   = 19021
)

type feishuBody struct {
	Timestamp string        `json:"timestamp,omitempty"`
	Sign      string        `json:"sign,omitempty"`
	MsgType   string        `json:"msg_type"`
	Content   feishuContent `json:"content"`
}

type feishuContent struct {
	Post map[string]FeishuPost `json:"post"`
}

// FeishuPost is one language of a rich-text message.
type FeishuPost struct {
	Title   string            `json:"title"`
	Content [][]FeishuElement `json:"content"`
}

// FeishuElement is one node of a rich-text paragraph.
type FeishuElement struct {
	Tag  string `json:"tag"`
	Text string `json:"text,omitempty"`
	Href string `json:"href,omitempty"`
}

// FeishuSign is the bot's signature for timestamp (Unix seconds) and secret.
func FeishuSign(timestamp int64, secret string) string {
	mac := hmac.New(sha256.New, []byte(strconv.FormatInt(timestamp, 10)+"\n"+secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// FeishuLang maps a portal language to the post's language key.
func FeishuLang(lang string) string {
	if lang == "en" {
		return "en_us"
	}
	return "zh_cn"
}

func (s *Sender) sendFeishu(ctx context.Context, t Target, m Message) (Outcome, error) {
	const op = "notify.Send feishu"
	post := FeishuPost{Title: m.Subject, Content: [][]FeishuElement{{{Tag: "text", Text: m.Text}}}}
	if m.Link != "" {
		label := m.LinkLabel
		if label == "" {
			label = m.Link
		}
		post.Content = append(post.Content, []FeishuElement{{Tag: "a", Text: label, Href: m.Link}})
	}
	b := feishuBody{MsgType: "post", Content: feishuContent{Post: map[string]FeishuPost{FeishuLang(m.Lang): post}}}
	if t.Secret != "" {
		ts := s.now().Unix()
		b.Timestamp, b.Sign = strconv.FormatInt(ts, 10), FeishuSign(ts, t.Secret)
	}
	body, _ := json.Marshal(b)
	r, o, err := s.post(ctx, op, t.URL, body, nil, secretsOf(t))
	if err != nil {
		return o, err
	}
	var a struct {
		Code          *int   `json:"code"`
		Msg           string `json:"msg"`
		StatusCode    *int   `json:"StatusCode"`
		StatusMessage string `json:"StatusMessage"`
	}
	if json.Unmarshal(r.Body, &a) != nil || (a.Code == nil && a.StatusCode == nil) {
		return unavailable(op, o, "%s answered HTTP %d without a code", Redact(t.URL), r.Status)
	}
	// When both are present (transitional answers) "code" is the real one.
	code, msg := 0, ""
	if a.Code != nil {
		code, msg = *a.Code, a.Msg
	} else {
		code, msg = *a.StatusCode, a.StatusMessage
	}
	switch code {
	case FeishuOK:
		return o, nil
	case FeishuFreqLimited:
		return unavailable(op, o, "%s", vendorCode("Feishu", code, msg))
	default:
		return refused(op, o, "%s", vendorCode("Feishu", code, msg))
	}
}
