package refunds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/links"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/settings"
)

// Letter is the e-mail that asks a payer for the account their refund goes
// to.
type Letter struct {
	Subject string
	Text    string
	HTML    string
}

// letterHTML is the HTML alternative of the e-mail, as a payment link's:
// one column, inline styles, every value escaped by html/template.
var letterHTML = template.Must(template.New("letter").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1a1a1a">
<div style="max-width:480px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">
<p style="margin:0 0 8px">{{.Refunds}}</p>
<p style="margin:0 0 4px;font-size:28px;font-weight:bold">{{.Amount}}</p>
<p style="margin:0 0 4px">{{.Reason}}</p>
<p style="margin:0 0 20px;color:#555555;font-size:14px">{{.OrderLine}}</p>
<p style="margin:0 0 20px">{{.Ask}}</p>
<p style="margin:0 0 20px"><a href="{{.URL}}" style="display:inline-block;background:#0b5fff;color:#ffffff;text-decoration:none;font-weight:bold;padding:12px 20px;border-radius:6px">{{.Give}}</a></p>
<p style="margin:0 0 8px;font-size:14px;color:#555555;word-break:break-all">{{.URL}}</p>
<p style="margin:16px 0 0;font-size:13px;color:#555555">{{.Ignore}}</p>
</div></body></html>
`))

// Write writes the e-mail of refund r of the shop named shop, whose page
// is at url, in language lang.
func Write(shop string, r ledger.Refund, url, lang string) (Letter, error) {
	l := i18n.New(lang)
	amount := l.Amount(r.Amount)
	v := struct {
		Lang, Subject, Refunds, Amount, Reason, OrderLine, Ask, Give, URL, Ignore string
	}{
		Lang: l.Lang(), Subject: l.T("email.refund.subject", shop, amount), Refunds: l.T("email.refund.gives", shop),
		Amount: amount, Reason: r.Reason, OrderLine: l.T("email.refund.order", r.OrderID), Ask: l.T("email.refund.ask"),
		Give: l.T("email.refund.give"), URL: url, Ignore: l.T("email.refund.ignore", shop),
	}
	var html bytes.Buffer
	if err := letterHTML.Execute(&html, v); err != nil {
		return Letter{}, err
	}
	text := strings.Join([]string{v.Refunds, "", v.Amount, v.Reason, v.OrderLine, "", v.Ask, "", v.Give + ":", v.URL, "", v.Ignore, ""}, "\n")
	return Letter{Subject: v.Subject, Text: text, HTML: html.String()}, nil
}

// KeepOrderEmail keeps, sealed, the e-mail address a shop's signed link
// gave for its order, with the language its payer checks out in: where,
// and in which language, a refund's page is sent. Without SETTINGS_KEYS
// nothing is kept.
func (s *Service) KeepOrderEmail(ctx context.Context, merchantID, orderID, email, lang string) error {
	if s == nil || s.Keys == nil || email == "" {
		return nil
	}
	return s.Ledger.KeepOrderEmail(ctx, merchantID, orderID, s.Keys.Seal(email, orderEmailBinding(merchantID, orderID)), lang)
}

func orderEmailBinding(merchantID, orderID string) string {
	return "order e-mail " + merchantID + "/" + orderID
}

// KeepOrderEmails is how long a payer's address of a signed link is kept
// with its order: past the 14 days a consumer has to withdraw and the 14
// a shop has to pay back, with time for the goods to travel.
const KeepOrderEmails = 60 * 24 * time.Hour

// PayerEmail is the address a refund's page goes to: the signed link's
// email kept with the order, or a single-use payment link's; "" when the
// order has none.
func (s *Service) PayerEmail(ctx context.Context, r ledger.Refund) (string, error) {
	if s.Keys == nil {
		return "", nil
	}
	sealed, err := s.Ledger.OrderEmail(ctx, r.MerchantID, r.OrderID)
	if err != nil {
		return "", err
	}
	if sealed != "" {
		email, err := s.Keys.Open(sealed, orderEmailBinding(r.MerchantID, r.OrderID))
		if err != nil {
			return "", nil
		}
		return email, nil
	}
	p, err := s.Ledger.OrderLink(ctx, r.MerchantID, r.OrderID)
	if err != nil || p.Kind != ledger.LinkSingle {
		return "", err
	}
	return links.EmailOf(s.Keys, p), nil
}

// SendPage e-mails a refund waiting for its account the address of its
// page, in the payer's language, within the mail bounds (a
// *mailer.LimitError past one, with its audit line). ErrNoEmail when the
// order has no address, ErrNoMail when e-mail is not set up.
func (s *Service) SendPage(ctx context.Context, by settings.Actor, m *merchant.Merchant, r ledger.Refund) error {
	if s.Mail == nil {
		return links.ErrNoMail
	}
	if r.State != ledger.RefundAwaitingAccount {
		return ErrMoved
	}
	to, err := s.PayerEmail(ctx, r)
	if err != nil {
		return err
	}
	if to == "" {
		return ErrNoEmail
	}
	var held *mailer.Reservation
	if s.Bounds != nil {
		held, err = s.Bounds.Reserve(ctx, m.ID, "refund "+r.ID, to)
		var limit *mailer.LimitError
		if errors.As(err, &limit) {
			return errors.Join(err, s.Ledger.AppendAudit(ctx, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: m.ID,
				Event: settings.EventMailRefused, Args: []ledger.AuditArg{ledger.Text(r.ID), ledger.Reason(links.MailBoundReason(limit.Bound))}}))
		}
		if err != nil {
			return err
		}
	}
	lang := r.Lang
	if lang == "" {
		lang = "en"
	}
	letter, err := Write(m.Name, r, s.PageURL(r), lang)
	if err != nil {
		return errors.Join(err, held.GiveBack(ctx))
	}
	if err := s.Mail.SendAlternative(ctx, to, letter.Subject, letter.Text, letter.HTML); err != nil {
		return errors.Join(fmt.Errorf("sending refund %s's page: %w", r.ID, err), held.GiveBack(ctx))
	}
	return s.Ledger.AppendAudit(ctx, ledger.AuditEntry{Actor: by.Name, RequestID: by.RequestID, MerchantID: m.ID,
		Event: settings.EventRefundEmailed, Args: []ledger.AuditArg{ledger.Text(r.ID), ledger.Language(lang)}})
}

// Run erases, every Every, the payers' accounts of refunds that ended
// KeepAccount ago and the addresses kept with orders older than
// KeepOrderEmails, until ctx ends.
func (s *Service) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.Erase(ctx)
		for {
			n, err := s.Ledger.ForgetOrderEmails(ctx, s.now().Add(-KeepOrderEmails), 500)
			if err != nil || n < 500 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
