// Package mailer sends the app's few e-mails (an invitation to a team, a
// warning that wrong two-step codes followed a person's password) through the
// SMTP server SMTP_URL names, with wneessen/go-mail: a well-kept client that
// speaks STARTTLS, implicit TLS and the usual authentication mechanisms, which
// the standard library's net/smtp does not all do.
package mailer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/paybybank/checkout/rules"
)

// Mailer sends e-mails from one address through one SMTP server.
type Mailer struct {
	host string
	from string
	opts []gomail.Option
}

// Parse reads SMTP_URL:
//
//	smtp://user:password@host:587?from=pay@shop.example    STARTTLS, required
//	smtps://user:password@host:465?from=pay@shop.example   TLS from the start
//	smtp+insecure://127.0.0.1:1025?from=pay@shop.example   no TLS: the local machine only
//
// from is the sender's address; user and password are optional.
func Parse(raw string) (*Mailer, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil, errors.New("SMTP_URL: not a URL like smtp://user:password@mail.example:587?from=pay@shop.example")
	}
	from := u.Query().Get("from")
	if rules.CheckEmail("from", from) != nil {
		return nil, fmt.Errorf("SMTP_URL: from=%q is not a plain e-mail address, like ?from=pay@shop.example", from)
	}
	m := &Mailer{host: u.Hostname(), from: from, opts: []gomail.Option{gomail.WithTimeout(15 * time.Second)}}
	port := 0
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("SMTP_URL: port %q is not a port", p)
		}
	}
	switch u.Scheme {
	case "smtp":
		m.opts = append(m.opts, gomail.WithTLSPortPolicy(gomail.TLSMandatory))
	case "smtps":
		m.opts = append(m.opts, gomail.WithSSLPort(false))
	case "smtp+insecure":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, errors.New("SMTP_URL: smtp+insecure:// sends in the clear, so only to this machine (localhost, 127.0.0.1, [::1])")
		}
		m.opts = append(m.opts, gomail.WithTLSPortPolicy(gomail.NoTLS))
	default:
		return nil, fmt.Errorf("SMTP_URL: scheme %q is none of smtp (STARTTLS), smtps (TLS) or smtp+insecure (this machine only)", u.Scheme)
	}
	if port != 0 {
		m.opts = append(m.opts, gomail.WithPort(port))
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		m.opts = append(m.opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pw))
	}
	return m, nil
}

// Send sends a plain-text e-mail.
func (m *Mailer) Send(ctx context.Context, to, subject, body string) error {
	return m.send(ctx, to, subject, body, "")
}

// SendAlternative sends an e-mail with a plain-text body and an HTML
// alternative: mail clients show the one they can.
func (m *Mailer) SendAlternative(ctx context.Context, to, subject, text, html string) error {
	return m.send(ctx, to, subject, text, html)
}

func (m *Mailer) send(ctx context.Context, to, subject, body, html string) error {
	msg := gomail.NewMsg()
	if err := msg.From(m.from); err != nil {
		return err
	}
	if err := msg.To(to); err != nil {
		return err
	}
	msg.Subject(subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, body)
	if html != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, html)
	}
	c, err := gomail.NewClient(m.host, m.opts...)
	if err != nil {
		return err
	}
	return c.DialAndSendWithContext(ctx, msg)
}
