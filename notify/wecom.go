package notify

// WeCom (企业微信) group robot (群机器人), as documented at
// https://developer.work.weixin.qq.com/document/path/91770 : POST JSON to
// https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=… (the key is the
// only credential), msgtype text|markdown|…; markdown.content is at most
// 4096 bytes of UTF-8; at most 20 messages a minute per robot. Answers are
// HTTP 200 with errcode: 0 ok, 45009 "api freq out of limit", 93000
// "invalid webhook url", 40058 content too long. The same URL shape, body
// and 4096-byte limit appear in public clients: loonghao/notify-bridge
// (docs/guide/wecom.md) and lsiten/listen-agent-skills
// (skills/wechat-work-notification/README.md).

import (
	"context"
	"encoding/json"
	"time"
)

// WeCom's answer codes the sender acts on.
const (
	WeComOK         = 0
	WeComFreqLimit  = 45009
	WeComBadURL     = 93000
	WeComTooLong    = 40058
	WeComMaxContent = 4096 // bytes of markdown.content
)

type weComBody struct {
	MsgType  string        `json:"msgtype"`
	Markdown weComMarkdown `json:"markdown"`
}

type weComMarkdown struct {
	Content string `json:"content"`
}

func (s *Sender) sendWeCom(ctx context.Context, t Target, m Message) (Outcome, error) {
	const op = "notify.Send wecom"
	body, _ := json.Marshal(weComBody{MsgType: "markdown", Markdown: weComMarkdown{Content: WeComContent(m)}})
	r, o, err := s.post(ctx, op, t.URL, body, nil, secretsOf(t))
	if err != nil {
		return o, err
	}
	a, o, err := readErrcode(op, r, o, t.URL)
	if err != nil {
		return o, err
	}
	switch *a.ErrCode {
	case WeComOK:
		return o, nil
	case WeComFreqLimit:
		o.After = time.Minute // the limit is per minute
		return unavailable(op, o, "%s", vendorCode("WeCom", *a.ErrCode, a.ErrMsg))
	default:
		return refused(op, o, "%s", vendorCode("WeCom", *a.ErrCode, a.ErrMsg))
	}
}

// WeComContent is the markdown the robot gets, at most WeComMaxContent
// bytes. The text is what gets cut — on a rune boundary, marked with an
// ellipsis — so the heading and the link back into the portal survive.
func WeComContent(m Message) string {
	head := "**" + m.Subject + "**\n\n"
	tail := ""
	if m.Link != "" {
		tail = "\n\n" + markdownLink(m)
	}
	room := WeComMaxContent - len(head) - len(tail)
	text := m.Text
	if len(text) > room {
		const more = "…"
		text = cutUTF8(text, max(room-len(more), 0)) + more
	}
	return cutUTF8(head+text+tail, WeComMaxContent)
}
