// Package notify tells people what they need to know where they already
// are: the catalogue of events worth telling (and who hears each by
// default), the channels a notice goes out on — e-mail over SMTP, the
// DingTalk, WeCom and Feishu group robots and a signed generic webhook —
// and the sender that drains the database outbox. It knows nothing of the
// database: the store keeps the outbox and hands the sender its rows.
package notify
