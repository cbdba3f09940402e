package notify

import (
	"bytes"
	"fmt"
	"html"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
)

// BuildMail renders m as an RFC 5322 message with CRLF line ends: a
// multipart/alternative with the text and an HTML rendering of it, the
// link in both.
func BuildMail(from, to *mail.Address, m Message, now time.Time) []byte {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	writePart(mw, "text/plain; charset=UTF-8", plainBody(m))
	writePart(mw, "text/html; charset=UTF-8", htmlBody(m))
	_ = mw.Close()

	var b bytes.Buffer
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	header("From", from.String())
	header("To", to.String())
	header("Subject", mime.BEncoding.Encode("UTF-8", oneLine(m.Subject)))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", newMessageID(from.Address, now))
	header("MIME-Version", "1.0")
	if lang := oneLine(m.Lang); lang != "" {
		header("Content-Language", lang)
	}
	header("Content-Type", `multipart/alternative; boundary="`+mw.Boundary()+`"`)
	b.WriteString("\r\n")
	b.Write(body.Bytes())
	return b.Bytes()
}

func writePart(mw *multipart.Writer, contentType, text string) {
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", contentType)
	// Quoted-printable keeps the lines under SMTP's 998-byte limit whatever
	// the text, and leaves ASCII readable in the raw message.
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	w, _ := mw.CreatePart(h)
	qp := quotedprintable.NewWriter(w)
	_, _ = qp.Write([]byte(strings.ReplaceAll(text, "\n", "\r\n")))
	_ = qp.Close()
}

func plainBody(m Message) string {
	out := m.Text
	if m.Link != "" {
		if m.LinkLabel != "" {
			out += "\n\n" + m.LinkLabel + ": " + m.Link
		} else {
			out += "\n\n" + m.Link
		}
	}
	return out + "\n"
}

func htmlBody(m Message) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="` + html.EscapeString(m.Lang) + `"><head><meta charset="utf-8"><title>`)
	b.WriteString(html.EscapeString(m.Subject))
	b.WriteString("</title></head><body>\n")
	for _, p := range strings.Split(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n\n") {
		b.WriteString("<p>" + strings.ReplaceAll(html.EscapeString(p), "\n", "<br>\n") + "</p>\n")
	}
	if m.Link != "" {
		label := m.LinkLabel
		if label == "" {
			label = m.Link
		}
		b.WriteString(`<p><a href="` + html.EscapeString(m.Link) + `">` + html.EscapeString(label) + "</a></p>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// oneLine keeps a header value on one line: a CR or LF in it would start a
// header of the sender's choosing.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
