package notify

import "time"

// Kind names a channel a notice can go out on.
type Kind string

// The channels. InApp is the bell in the portal's header; it needs no
// sending. Mail goes to a user's address; the robots and the webhook post
// to a group configured by an admin (system-wide) or a team's manager.
const (
	InApp    Kind = "in_app"
	Mail     Kind = "mail"
	DingTalk Kind = "dingtalk"
	WeCom    Kind = "wecom"
	Feishu   Kind = "feishu"
	Webhook  Kind = "webhook"
)

// RobotKinds are the channels an admin or manager configures with a URL.
var RobotKinds = []Kind{DingTalk, WeCom, Feishu, Webhook}

// Target is where one notice goes: a robot's webhook URL and signing
// secret, or a mail address.
type Target struct {
	Kind   Kind
	URL    string // robot / webhook URL (WeCom carries its key in it)
	Secret string // DingTalk / Feishu signing secret, webhook HMAC key; may be empty
	To     string // mail address
}

// Message is one notice rendered in its recipient's language.
type Message struct {
	Event     string // the event's name, e.g. quota_expiring
	Lang      string // zh-CN or en
	Subject   string // one line: the mail subject, the robot's title
	Text      string // the body as plain text, without the link
	Link      string // absolute URL back into the portal; may be empty
	LinkLabel string // the link's words, e.g. 打开卡时
}

// Outcome is what a channel answered: its real reply, and whether a failure
// may pass if tried again.
type Outcome struct {
	Status int           // HTTP status, or the SMTP reply code
	Answer string        // the reply body (at most 2 KiB), for admins and the test button
	Retry  bool          // a failure that may pass: 5xx, a timeout, a rate limit
	After  time.Duration // how long the vendor asked to wait (rate limited); 0 = the sender's backoff
}
