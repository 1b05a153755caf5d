package sandbox

import (
	"fmt"
	"hash/fnv"
	"html/template"
	mathrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"unicode"
)

// checkoutPage is the provider's hosted checkout as the sandbox plays it. It
// applies the merchant's customization the way a provider would, and shows the
// data that arrived pre-filled, so a person can see that nothing was lost.
var checkoutPage = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Sandbox bank checkout</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:{{.Bg}};color:#111}
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:{{.Radius}};box-shadow:{{.Shadow}}}
h1{font-size:1.25rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{color:#555}dd{margin:0;word-break:break-all}
button{font:inherit;padding:.75rem 1rem;margin:.25rem 0;width:100%;border-radius:{{.Radius}};border:2px solid {{.Primary}};cursor:pointer}
.approve{background:{{.Primary}};color:{{.OnPrimary}}}.reject,.leave{background:#fff;color:#111}
.note{font-size:.875rem;color:#555}
</style>
</head>
<body>
<main>
{{if .Logo}}<img src="{{.Logo}}" alt="{{.Title}}" height="{{.LogoHeight}}">{{end}}
<h1>{{.Title}}</h1>
<p class="note">Sandbox provider: no money moves.</p>
<dl data-testid="summary">
<dt>Amount</dt><dd data-testid="amount">{{.Amount}} {{.Currency}}</dd>
<dt>Order</dt><dd>{{.OrderID}}</dd>
<dt>Bank</dt><dd data-testid="bank">{{if .Bank}}{{.Bank}}{{else}}to be chosen{{end}}</dd>
{{range .Prefilled}}<dt>{{.Name}}</dt><dd data-testid="payer-{{.Name}}">{{.Value}}</dd>
{{end}}</dl>
{{if .Status}}<p data-testid="status">Status: {{.Status}}</p>{{end}}
<form method="post">
<button class="approve" name="action" value="approve">Approve payment</button>
<button class="reject" name="action" value="reject">Reject payment</button>
<button class="leave" name="action" value="leave">Leave without deciding</button>
</form>
</main>
</body>
</html>`))

type prefilled struct{ Name, Value string }

type checkoutView struct {
	Title, Logo, LogoHeight   string
	Bg, Primary, OnPrimary    string
	Radius, Shadow            string
	Amount, Currency, OrderID string
	Bank                      string
	Status                    string
	Prefilled                 []prefilled
}

// openPayment finds the payment of the link's token and marks it opened
// (NOT_FOUND becomes IN_PROGRESS). It returns with s.mu held, or answers 404
// and returns false with it released.
func (s *Sandbox) openPayment(w http.ResponseWriter, r *http.Request) (*payment, bool) {
	s.mu.Lock()
	p, ok := s.byToken[r.PathValue("token")]
	if !ok {
		s.mu.Unlock()
		http.Error(w, "This payment link is not valid.", http.StatusNotFound)
		return nil, false
	}
	if p.openedAt.IsZero() {
		p.openedAt = s.now()
	}
	return p, true
}

// showCheckout opens a payment: NOT_FOUND becomes IN_PROGRESS.
func (s *Sandbox) showCheckout(w http.ResponseWriter, r *http.Request) {
	p, ok := s.openPayment(w, r)
	if !ok {
		return
	}
	v := checkoutView{
		Amount: p.req.Amount, Currency: p.req.Currency, OrderID: p.req.MerchantOrderID,
		Bank: p.bankName,
	}
	if st := s.statusOf(p); st == statusAccepted || st == statusCompleted || st == statusCanceled {
		v.Status = st
	}
	req := p.req
	s.mu.Unlock()

	th := newHostedTheme(req.Customization, "Pay by bank")
	v.Title, v.Logo, v.LogoHeight = th.Title, th.Logo, th.LogoHeight
	v.Bg, v.Primary, v.OnPrimary = th.Bg, th.Primary, th.OnPrimary
	v.Radius, v.Shadow = th.Radius, th.Shadow
	if pr := req.Payer; pr != nil {
		for _, f := range []prefilled{
			{"name", pr.Name}, {"iban", pr.IBAN}, {"bic", pr.BIC}, {"psuId", pr.PSUID},
			{"psuCorporateId", pr.PSUCorporateID}, {"country", pr.Country}, {"countryCode", pr.CountryCode},
			{"city", pr.City}, {"postCode", pr.PostCode}, {"addressLines", strings.Join(pr.AddressLines, ", ")},
		} {
			if f.Value != "" {
				v.Prefilled = append(v.Prefilled, f)
			}
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	checkoutPage.Execute(w, v)
}

// finishCheckout takes the shopper's decision and sends them to return_url.
// A decision on a payment already decided changes nothing.
func (s *Sandbox) finishCheckout(w http.ResponseWriter, r *http.Request) {
	p, ok := s.openPayment(w, r)
	if !ok {
		return
	}
	if st := s.statusOf(p); st == statusNotFound || st == statusInProgress {
		switch r.FormValue("action") {
		case "approve":
			// A failing bank cancels its share of the payments the
			// shopper approves.
			if share := s.knobs.FailingBanks[BankKey(p.req.InstitutionCountryCode, p.req.InstitutionID)]; share > 0 && mathrand.Float64() < share {
				p.rejected = true
			} else {
				p.approvedAt = s.now()
			}
		case "reject":
			p.rejected = true
		}
	}
	back := p.req.ReturnURL
	id := p.req.MerchantOrderID
	s.mu.Unlock()
	http.Redirect(w, r, withQuery(back, "merchant_order_id", id), http.StatusSeeOther)
}

// withQuery appends one parameter to a URL, as the real provider may do to
// return_url: its document leaves the redirect's parameters undescribed.
func withQuery(raw, name, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// logo serves a bank's logo: its initials on a colour derived from its id.
func (s *Sandbox) logo(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
	var name string
	if ok {
		for _, b := range s.listed() {
			if b.ID == id {
				name = b.Name
				break
			}
		}
	}
	if name == "" {
		http.NotFound(w, r)
		return
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	hue := h.Sum32() % 360
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40" width="40" height="40"><rect width="40" height="40" rx="8" fill="hsl(%d,55%%,35%%)"/><text x="20" y="25" font-family="sans-serif" font-size="14" font-weight="700" fill="#fff" text-anchor="middle">%s</text></svg>`,
		hue, template.HTMLEscapeString(initials(name)))
}

// initials takes the first letter of the first two words of a bank's name.
func initials(name string) string {
	var out []rune
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out = append(out, unicode.ToUpper([]rune(w)[0]))
		if len(out) == 2 {
			break
		}
	}
	return string(out)
}
