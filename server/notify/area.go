// Package notify is the area of notices: the bell's list, each user's
// notice settings, the group robots and webhooks admins and managers
// configure (with a test button that shows the channel's real answer), the
// admins' view of the outbox, and the two loops that look for due
// reminders and drain the outbox.
package notify

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"cardhour/errs"
	nt "cardhour/notify"
	"cardhour/server/area"
	"cardhour/store"
	"cardhour/web"
)

// Area serves notices and sends them.
type Area struct {
	area.Deps
	sender *nt.Sender
	base   string // the portal's public URL, for links in mail and chat
}

// New builds the area; mail goes out when the deployment names an SMTP
// server.
func New(d area.Deps) *Area {
	d.Store.SetDelivery(store.Delivery{Mail: d.Config.Mail.Addr != "", Lang: d.Config.Lang, TZ: d.Config.TZ})
	base := strings.TrimRight(d.Config.BaseURL, "/")
	if base == "" {
		host := d.Config.Addr
		if strings.HasPrefix(host, ":") {
			host = "localhost" + host
		}
		base = "http://" + host
	}
	return &Area{Deps: d, sender: nt.NewSender(nt.SenderConfig{Mail: nt.MailConfig(d.Config.Mail), Timeout: sendTimeout}), base: base}
}

// Batch sizes of the sender: how many notices one claim leases, and for
// how long (longer than sending them takes, with every channel's timeout).
// One claim is sent in order, so a batch of a channel that does not answer
// can outlast its lease: deliver leaves a notice whose lease would end
// before one more try could (sendTimeout), rather than send what another
// sender may already have claimed again.
const (
	claimBatch  = 200
	claimLease  = 5 * time.Minute
	sendTimeout = 10 * time.Second
)

// Jobs are the reminder scan and the sender. Neither ever blocks booking
// or the board: they run in their own loops, and a channel that is down
// only delays its own notices.
func (a *Area) Jobs() []area.Job {
	return []area.Job{
		{Name: "reminder scan", Every: a.Config.ReminderEvery, Run: func(ctx context.Context) error {
			_, err := a.Store.ScanReminders(ctx)
			return err
		}, Once: "reminder scan"},
		{Name: "notice sender", Every: time.Second, Run: a.Drain},
	}
}

// Drain sends what is due until nothing is, or the rates of the channels
// hold the rest back: the sender job's round.
func (a *Area) Drain(ctx context.Context) error {
	for ctx.Err() == nil {
		rows, err := a.Store.ClaimOutbox(ctx, claimBatch, claimLease)
		if err != nil || len(rows) == 0 {
			return err
		}
		if err := a.deliverAll(ctx, rows); err != nil {
			return err
		}
	}
	return nil
}

// channelsAtOnce bounds how many channels one sender talks to at a time.
const channelsAtOnce = 8

// deliverAll sends a claim's notices: each channel's in order, one at a
// time (its vendor's limits are per robot), the channels side by side, so
// that a robot that hangs delays only its own notices. Mail goes out as
// one more channel.
func (a *Area) deliverAll(ctx context.Context, rows []store.OutboxRow) error {
	byChannel := map[int64][]store.OutboxRow{}
	var order []int64
	for _, r := range rows {
		var key int64 // 0 = mail
		if r.ChannelID != nil {
			key = *r.ChannelID
		}
		if _, ok := byChannel[key]; !ok {
			order = append(order, key)
		}
		byChannel[key] = append(byChannel[key], r)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		slots = make(chan struct{}, channelsAtOnce)
	)
	for _, key := range order {
		wg.Add(1)
		slots <- struct{}{}
		go func(rows []store.OutboxRow) {
			defer func() { <-slots; wg.Done() }()
			for _, r := range rows {
				if err := a.deliver(ctx, r); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}(byChannel[key])
	}
	wg.Wait()
	return first
}

// deliver tries one leased notice and records what came of it.
func (a *Area) deliver(ctx context.Context, r store.OutboxRow) error {
	if r.LeaseUntil != nil && !a.Store.Now().Add(sendTimeout).Before(*r.LeaseUntil) {
		return nil // the next claim after the lease takes it
	}
	t, err := a.Store.NotifyTarget(ctx, r)
	if err != nil {
		return err
	}
	out, sendErr := a.sender.Send(ctx, t, a.message(r.Lang, r.Kind, r.MessageKey, r.Link, r.Args()))
	o := store.Outcome{Sent: sendErr == nil, Status: out.Status, Answer: out.Answer}
	if sendErr != nil {
		o.Answer = answerOf(out, sendErr)
		if out.Retry {
			wait, last := nt.Backoff(a.Config.NoticeBackoff, r.Attempts+1, a.Config.NoticeTries)
			if !last {
				o.RetryAt = time.Now().UTC().Add(max(wait, out.After))
			}
		}
		a.Log.Warn("notice not delivered", "notice", r.ID, "channel", r.Channel, "try", r.Attempts+1, "retry", !o.RetryAt.IsZero(), "err", sendErr)
	}
	return a.Store.FinishOutbox(ctx, r, o)
}

// answerOf is what admins see of a failed try: the channel's answer, or
// the error when it gave none (a refused connection).
func answerOf(out nt.Outcome, err error) string {
	if out.Answer != "" {
		return out.Answer
	}
	if e, ok := errs.As(err); ok && e.Err != nil {
		return e.Err.Error()
	}
	return err.Error()
}

// message renders a notice in lang with a link back into the portal.
func (a *Area) message(lang, kind, key, link string, args []any) nt.Message {
	subject, text, lines := web.NoticeText(lang, kind, key, args)
	if len(lines) > 0 {
		text += "\n" + strings.Join(lines, "\n")
	}
	m := nt.Message{Event: kind, Lang: lang, Subject: web.T(lang, "app.name") + " · " + subject, Text: text,
		LinkLabel: web.T(lang, "notify.open")}
	if link != "" {
		if u, err := url.Parse(a.base + link); err == nil {
			m.Link = u.String()
		}
	}
	return m
}
