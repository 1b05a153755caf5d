package links

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/ledger"
)

// Letter is the e-mail that carries a link to its payer.
type Letter struct {
	Subject string
	Text    string
	HTML    string
	// Lang is the language it is written in.
	Lang string
}

// letterHTML is the HTML alternative of the e-mail: one column, inline
// styles (mail clients drop style sheets), every value escaped by
// html/template. It is a letter, not a page of the app, so it lives with
// the link rather than with the templ views.
var letterHTML = template.Must(template.New("letter").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1a1a1a">
<div style="max-width:480px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">
<p style="margin:0 0 8px">{{.Asks}}</p>
<p style="margin:0 0 4px;font-size:28px;font-weight:bold">{{.Amount}}</p>
<p style="margin:0 0 4px">{{.Description}}</p>
<p style="margin:0 0 20px;color:#555555;font-size:14px">{{.ReferenceLine}}</p>
<p style="margin:0 0 20px"><a href="{{.URL}}" style="display:inline-block;background:#0b5fff;color:#ffffff;text-decoration:none;font-weight:bold;padding:12px 20px;border-radius:6px">{{.Pay}}</a></p>
<p style="margin:0 0 8px;font-size:14px;color:#555555">{{.Expires}}</p>
<p style="margin:0 0 8px;font-size:14px;color:#555555;word-break:break-all">{{.URL}}</p>
<p style="margin:16px 0 0;font-size:13px;color:#555555">{{.Ignore}}</p>
</div></body></html>
`))

// Write writes the e-mail of link p of the shop named shop, at url, in
// the link's language.
func Write(shop string, p ledger.PaymentLink, url string) (Letter, error) {
	l := i18n.New(p.Lang)
	amount := l.Amount(p.Amount)
	v := struct {
		Lang, Subject, Asks, Amount, Description, ReferenceLine, Pay, Expires, URL, Ignore string
	}{
		Lang: l.Lang(), Subject: l.T("email.link.subject", shop, amount), Asks: l.T("email.link.asks", shop),
		Amount: amount, Description: p.Description, ReferenceLine: l.T("email.link.reference", p.Reference),
		Pay: l.T("email.link.pay"), Expires: l.T("email.link.expires", l.DateTime(p.Expires)+" UTC"), URL: url,
		Ignore: l.T("email.link.ignore", shop),
	}
	var html bytes.Buffer
	if err := letterHTML.Execute(&html, v); err != nil {
		return Letter{}, err
	}
	text := strings.Join([]string{v.Asks, "", v.Amount, v.Description, v.ReferenceLine, "", v.Pay + ":", v.URL, "", v.Expires, "", v.Ignore, ""}, "\n")
	return Letter{Subject: v.Subject, Text: text, HTML: html.String(), Lang: l.Lang()}, nil
}
