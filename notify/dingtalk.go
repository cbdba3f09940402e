package notify

// DingTalk custom robot (自定义机器人), as documented at
// https://open.dingtalk.com/document/group/custom-robot-access and
// https://open.dingtalk.com/document/robots/customize-robot-security-settings :
// POST JSON to https://oapi.dingtalk.com/robot/send?access_token=…; with the
// "加签" security setting the query also carries timestamp (ms) and
// sign = urlencode(base64(HMAC-SHA256(key=secret, timestamp+"\n"+secret))),
// valid for one hour. The same algorithm is in the public SDKs, e.g. the
// Rust crate dingding (https://docs.rs/crate/dingding/latest/source/src/signature.rs)
// and the Java client linked from admin4j/http (ext/dingtalk). Refusals come
// with HTTP 200 and an errcode: 310000 sign/keyword/IP mismatch or a stale
// timestamp, 130101 "send too fast" (20 messages per minute per robot, then
// blocked for 10 minutes), 300001 unknown token.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// DingTalk's answer codes the sender acts on.
const (
	DingTalkOK        = 0
	DingTalkTooFast   = 130101
	DingTalkSignFails = 310000
)

type dingTalkBody struct {
	MsgType  string           `json:"msgtype"`
	Markdown dingTalkMarkdown `json:"markdown"`
}

type dingTalkMarkdown struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// DingTalkSign is the robot's signature of timestampMS with secret.
func DingTalkSign(timestampMS int64, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestampMS, 10) + "\n" + secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (s *Sender) sendDingTalk(ctx context.Context, t Target, m Message) (Outcome, error) {
	const op = "notify.Send dingtalk"
	u, err := url.Parse(t.URL)
	if err != nil {
		return refused(op, Outcome{}, "webhook URL %s does not parse", Redact(t.URL))
	}
	if t.Secret != "" {
		ts := s.now().UnixMilli()
		q := u.Query()
		q.Set("timestamp", strconv.FormatInt(ts, 10))
		// Encode URL-encodes the base64 once, which is what the robot wants.
		q.Set("sign", DingTalkSign(ts, t.Secret))
		u.RawQuery = q.Encode()
	}
	body, _ := json.Marshal(dingTalkBody{MsgType: "markdown", Markdown: dingTalkMarkdown{Title: m.Subject, Text: markdownText(m, "#### ")}})
	r, o, err := s.post(ctx, op, u.String(), body, nil, secretsOf(t))
	if err != nil {
		return o, err
	}
	a, o, err := readErrcode(op, r, o, t.URL)
	if err != nil {
		return o, err
	}
	switch *a.ErrCode {
	case DingTalkOK:
		return o, nil
	case DingTalkTooFast:
		// The robot is muted for a while after 20 a minute; a minute is the
		// shortest wait worth trying.
		o.After = time.Minute
		return unavailable(op, o, "%s", vendorCode("DingTalk", *a.ErrCode, a.ErrMsg))
	default:
		return refused(op, o, "%s", vendorCode("DingTalk", *a.ErrCode, a.ErrMsg))
	}
}

// errcodeAnswer is the answer DingTalk and WeCom share: {"errcode","errmsg"}.
type errcodeAnswer struct {
	ErrCode *int   `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
}

// readErrcode reads an errcode answer; a body without one (a proxy's page
// instead of the robot's JSON) is a failure that may pass.
func readErrcode(op string, r reply, o Outcome, rawURL string) (errcodeAnswer, Outcome, error) {
	var a errcodeAnswer
	if json.Unmarshal(r.Body, &a) != nil || a.ErrCode == nil {
		o, err := unavailable(op, o, "%s answered HTTP %d without an errcode", Redact(rawURL), r.Status)
		return a, o, err
	}
	return a, o, nil
}

// markdownText is the notice as robot Markdown: a heading, the text and the
// link as [label](url). Paragraph breaks are blank lines, which every
// vendor's Markdown reads the same.
func markdownText(m Message, heading string) string {
	out := heading + m.Subject + "\n\n" + m.Text
	if m.Link != "" {
		out += "\n\n" + markdownLink(m)
	}
	return out
}

func markdownLink(m Message) string {
	label := m.LinkLabel
	if label == "" {
		label = m.Link
	}
	return "[" + label + "](" + m.Link + ")"
}
