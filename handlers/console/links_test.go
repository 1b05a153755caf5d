package console_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/mailer"
	"github.com/paybybank/checkout/mailer/mailertest"
	"github.com/paybybank/checkout/merchant"
)

// makeLink posts the link form and returns the link's page address.
func (b *browser) makeLink(csrf string, form url.Values) string {
	b.e.t.Helper()
	form.Set("csrf", csrf)
	res := b.post("/console/links", form)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/console/links/") {
		body, _ := io.ReadAll(res.Body)
		b.e.t.Fatalf("making a link: %d to %q\n%.800s", res.StatusCode, res.Header.Get("Location"), body)
	}
	return res.Header.Get("Location")
}

func linkIDOf(page string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(page, "/console/links/"), "?")
	return id
}

func (e *env) auditText(merchantID string) string {
	e.t.Helper()
	lines, err := e.ledger.Audit(ctx, ledger.AuditQuery{MerchantID: merchantID, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Actor + " " + l.Event)
		for _, a := range l.Args {
			b.WriteString(" " + a.Value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestSupportMakesSharesAndCancelsALink(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(roleUser(merchant.Support))
	list := page(t, b.get("/console/links"), http.StatusOK)
	if list.Find(`[data-testid="link-form"]`).Length() != 1 || list.Find(`[data-testid="mail-off"]`).Length() != 1 {
		t.Fatal("the links page has no form, or does not say e-mail is not set up")
	}
	at := b.makeLink(csrf, url.Values{"amount": {"120.50"}, "description": {"Invoice 2026-117, kitchen repair"}, "reference": {"INV-2026-117"},
		"lang": {"de"}, "expires_in_days": {"30"}, "kind": {"single"}})
	id := linkIDOf(at)
	doc := page(t, b.get(at), http.StatusOK)
	if got := doc.Find(`[data-testid="payment-link-url"]`).Text(); got != "http://127.0.0.1/l/"+id {
		t.Errorf("the link's address reads %q", got)
	}
	if s := doc.Find(`[data-testid="link-state"]`); s.AttrOr("data-state", "") != "open" || s.Text() != "Open" {
		t.Errorf("state %q (%q), want open", s.AttrOr("data-state", ""), s.Text())
	}
	if doc.Find(`[data-testid="notice"]`).Text() == "" || doc.Find(`button[data-copy="payment-link-url"]`).Length() != 1 {
		t.Error("the new link's page says nothing of it being made, or has no copy button")
	}
	svg := b.get(at[:strings.Index(at+"?", "?")] + "/qr.svg")
	body, _ := io.ReadAll(svg.Body)
	if svg.StatusCode != http.StatusOK || svg.Header.Get("Content-Type") != "image/svg+xml" || !bytes.HasPrefix(body, []byte("<svg")) {
		t.Errorf("qr.svg: %d %q", svg.StatusCode, svg.Header.Get("Content-Type"))
	}
	png := b.get("/console/links/" + id + "/qr.png")
	body, _ = io.ReadAll(png.Body)
	if png.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("\x89PNG")) {
		t.Errorf("qr.png: %d, %d bytes", png.StatusCode, len(body))
	}
	// Cancelling asks once, then cancels.
	confirm := page(t, b.post("/console/links/"+id+"/cancel", url.Values{"csrf": {csrf}}), http.StatusOK)
	if confirm.Find(`[data-testid="confirm"]`).Length() != 1 {
		t.Fatal("cancelling does not ask first")
	}
	if res := b.post("/console/links/"+id+"/cancel", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	doc = page(t, b.get("/console/links/"+id), http.StatusOK)
	if s := doc.Find(`[data-testid="link-state"]`).AttrOr("data-state", ""); s != "cancelled" || doc.Find(`[data-testid="cancel-link"]`).Length() != 0 {
		t.Errorf("after cancelling: state %q, cancel button still there: %v", s, doc.Find(`[data-testid="cancel-link"]`).Length() != 0)
	}
	if res := b.post("/console/links/"+id+"/cancel", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); res.StatusCode != http.StatusConflict {
		t.Errorf("cancelling twice: %d, want 409", res.StatusCode)
	}
	audit := e.auditText("shop1")
	for _, want := range []string{"paymentLinkMade INV-2026-117 120.50 EUR", "paymentLinkCancelled INV-2026-117"} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, audit)
		}
	}
	// The list finds it by its description, filtered by state.
	found := page(t, b.get("/console/links?q=kitchen&state=cancelled"), http.StatusOK)
	if rows := found.Find(`[data-testid="link-row"]`); rows.Length() != 1 || rows.AttrOr("data-state", "") != "cancelled" {
		t.Errorf("searching finds %d rows", rows.Length())
	}
	if none := page(t, b.get("/console/links?q=kitchen&state=paid"), http.StatusOK); none.Find(`[data-testid="no-links"]`).Length() != 1 {
		t.Error("a search that matches nothing does not say so")
	}
}

func TestARefusedLinkNamesItsFieldsAndKeepsWhatWasTyped(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(roleUser(merchant.Developer))
	first := b.makeLink(csrf, url.Values{"amount": {"10"}, "description": {"Club fee"}, "reference": {"FEE-2026"}})
	typed := url.Values{"csrf": {csrf}, "amount": {"12.345"}, "description": {strings.Repeat("d", 201)}, "reference": {"A/B"},
		"lang": {"xx"}, "expires_in_days": {"400"}, "kind": {"reusable"}, "max_payments": {"0"}}
	doc := page(t, b.post("/console/links", typed), http.StatusUnprocessableEntity)
	for field, want := range map[string]string{
		"amount": "At most 2 decimals", "description": "at most 200 characters; this one has 201", "reference": "slash",
		"lang": `"xx" is not one of the payers' languages`, "expires_in_days": "From 1 hour to 365 days", "max_payments": "A whole number from 1 to",
	} {
		if got := doc.Find("#" + field + "-error").Text(); !strings.Contains(got, want) {
			t.Errorf("%s: refusal %q, want it to say %q", field, got, want)
		}
		if doc.Find(`#`+field+`[aria-invalid="true"]`).Length() != 1 {
			t.Errorf("%s is not marked invalid", field)
		}
	}
	for field, want := range map[string]string{"amount": "12.345", "reference": "A/B", "expires_in_days": "400", "max_payments": "0"} {
		if got := doc.Find("#"+field).AttrOr("value", ""); got != want {
			t.Errorf("%s came back as %q, want %q as typed", field, got, want)
		}
	}
	if doc.Find(`input[name="kind"][value="reusable"][checked]`).Length() != 1 || doc.Find(`[data-testid="link-errors"] li`).Length() != 6 {
		t.Errorf("the kind typed is lost, or the summary lists %d refusals", doc.Find(`[data-testid="link-errors"] li`).Length())
	}
	// A reference in use: 409, with the way to the link that has it.
	taken := page(t, b.post("/console/links", url.Values{"csrf": {csrf}, "amount": {"10"}, "description": {"Again"}, "reference": {"FEE-2026"}}), http.StatusConflict)
	if href := taken.Find(`[data-testid="reference-holder"]`).AttrOr("href", ""); href != "/console/links/"+linkIDOf(first) {
		t.Errorf("the taken reference leads to %q, want %q", href, first)
	}
	if got := taken.Find("#reference-error").Text(); !strings.Contains(got, `"FEE-2026" is already used`) {
		t.Errorf("the taken reference says %q", got)
	}
	// In the person's language too.
	if res := b.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"de"}, "back": {"/console/links"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("choosing German: %d", res.StatusCode)
	}
	de := page(t, b.post("/console/links", url.Values{"csrf": {csrf}, "amount": {"0.50"}, "description": {"Parken"}}), http.StatusUnprocessableEntity)
	if got := de.Find("#amount-error").Text(); got != "Von 1 bis 15000 Euro." {
		t.Errorf("the German refusal reads %q", got)
	}
}

func TestAViewerReadsLinksButNeitherMakesNorCancels(t *testing.T) {
	e := setup(t)
	owner := e.browser()
	id := linkIDOf(owner.makeLink(owner.signIn(shop1User), url.Values{"amount": {"10"}, "description": {"Parking"}}))
	viewer := e.browser()
	csrf := viewer.signIn(roleUser(merchant.Viewer))
	list := page(t, viewer.get("/console/links"), http.StatusOK)
	if list.Find(`[data-testid="link-form"]`).Length() != 0 || list.Find(`[data-testid="link-row"]`).Length() != 1 {
		t.Error("a viewer sees the form, or not the list")
	}
	doc := page(t, viewer.get("/console/links/"+id), http.StatusOK)
	if doc.Find(`[data-testid="cancel-link"]`).Length() != 0 || doc.Find(`[data-testid="payment-link-url"]`).Length() != 1 {
		t.Error("a viewer is offered Cancel, or not the address")
	}
	if res := viewer.post("/console/links", url.Values{"csrf": {csrf}, "amount": {"10"}, "description": {"Mine"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer making a link: %d, want 403", res.StatusCode)
	}
	if res := viewer.post("/console/links/"+id+"/cancel", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer cancelling a link: %d, want 403", res.StatusCode)
	}
	if p, err := e.ledger.Link(ctx, "shop1", id); err != nil || p.Stored != ledger.LinkOpen {
		t.Errorf("after the viewer's tries: %+v, %v", p, err)
	}
	// Another shop's people do not find it.
	other := e.browser()
	other.signIn(shop2User)
	page(t, other.get("/console/links/"+id), http.StatusNotFound)
	// An operator does, and makes links for the merchant they choose.
	op := e.browser()
	opCSRF := op.signIn(operator)
	page(t, op.get("/console/links/"+id), http.StatusOK)
	made := op.makeLink(opCSRF, url.Values{"merchant": {"shop2"}, "amount": {"5"}, "description": {"For shop2"}})
	if p, err := e.ledger.Link(ctx, "shop2", linkIDOf(made)); err != nil || p.CreatedBy != operator {
		t.Errorf("the operator's link for shop2: %+v, %v", p, err)
	}
}

func TestTheLinksCSVIsGuardedLikeThePayments(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(shop1User)
	b.makeLink(csrf, url.Values{"amount": {"10"}, "description": {"=HYPERLINK(\"http://evil.example\")"}, "reference": {"@SUM"}})
	res := b.get("/console/links.csv")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	rows, err := csv.NewReader(res.Body).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("CSV rows %v, %v", rows, err)
	}
	if rows[0][2] != "reference" || rows[1][2] != "'@SUM" || rows[1][3] != `'=HYPERLINK("http://evil.example")` || rows[1][7] != "open" {
		t.Errorf("CSV row %q", rows[1])
	}
	// Times are plain UTC times a spreadsheet reads, as in the payments'
	// CSV: the header says the zone, no cell does.
	at := slices.Index(rows[0], "created_at")
	if at < 0 {
		t.Fatalf("no created_at column in %q", rows[0])
	}
	if _, err := time.Parse("2006-01-02 15:04:05", rows[1][at]); err != nil {
		t.Errorf("created_at %q is not a plain UTC time: %v", rows[1][at], err)
	}
}

// parts reads a multipart/alternative e-mail into its parts by type.
func parts(t *testing.T, raw []byte) (*mail.Message, map[string]string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("content type %q, %v", msg.Header.Get("Content-Type"), err)
	}
	out := map[string]string{}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(p)
		if p.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
			body, _ = io.ReadAll(quotedPrintable(body))
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out[ct] = string(body)
	}
	return msg, out
}

func TestALinkIsEmailedInThePayersLanguageThroughARealSMTPServer(t *testing.T) {
	e := setup(t)
	sink, smtpURL := mailertest.Start(t, "pay@shop1.example")
	m, err := mailer.Parse(smtpURL)
	if err != nil {
		t.Fatal(err)
	}
	e.links.Mail = m
	b := e.browser()
	csrf := b.signIn(roleUser(merchant.Support))
	const payer = "anna.schmidt@example.de"
	at := b.makeLink(csrf, url.Values{"amount": {"25"}, "description": {"Vereinsbeitrag 2026"}, "reference": {"VB-7"}, "lang": {"de"},
		"email": {payer}, "kind": {"single"}})
	id := linkIDOf(at)
	doc := page(t, b.get(at), http.StatusOK)
	if !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "sent to the payer") {
		t.Errorf("the new link's page says %q", doc.Find(`[data-testid="notice"]`).Text())
	}
	got := sink.Sent()
	if len(got) != 1 || len(got[0].To) != 1 || got[0].To[0] != payer {
		t.Fatalf("mail sent: %+v", got)
	}
	msg, body := parts(t, got[0].Data)
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if subject != "Shop shop1 bittet Sie, 25,00\u00a0€ zu zahlen" {
		t.Errorf("subject %q", subject)
	}
	link := "http://127.0.0.1/l/" + id
	for _, kind := range []string{"text/plain", "text/html"} {
		for _, want := range []string{link, "Vereinsbeitrag 2026", "Referenz: VB-7", "Per Bank bezahlen"} {
			if !strings.Contains(body[kind], want) {
				t.Errorf("the %s part lacks %q:\n%s", kind, want, body[kind])
			}
		}
	}
	if !strings.Contains(body["text/html"], `lang="de"`) {
		t.Error("the HTML part is not marked German")
	}
	// Send again, to the address kept; the page offered it masked.
	if doc.Find(`#email-hint`).Text() == "" || strings.Contains(doc.Text(), payer) {
		t.Errorf("the send form shows %q; the page must not show the whole address", doc.Find(`#email-hint`).Text())
	}
	if res := b.post("/console/links/"+id+"/send", url.Values{"csrf": {csrf}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("send again: %d", res.StatusCode)
	}
	if got := sink.Sent(); len(got) != 2 || got[1].To[0] != payer {
		t.Errorf("after send again: %d mails", len(got))
	}
	bad := page(t, b.post("/console/links/"+id+"/send", url.Values{"csrf": {csrf}, "email": {"not an address"}}), http.StatusUnprocessableEntity)
	if bad.Find("#email").AttrOr("value", "") != "not an address" || bad.Find("#email-error").Text() == "" {
		t.Error("a bad address is not refused beside its field, as typed")
	}
	audit := e.auditText("shop1")
	if strings.Count(audit, "paymentLinkEmailed VB-7 de") != 2 {
		t.Errorf("the audit log has not both e-mails:\n%s", audit)
	}
	for where, text := range map[string]string{"audit log": audit, "log": e.logText()} {
		if strings.Contains(text, payer) || strings.Contains(text, "anna.schmidt") {
			t.Errorf("the payer's address is in the %s", where)
		}
	}
	tables, err := e.ledger.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for table, values := range tables {
		for _, v := range values {
			if strings.Contains(v, payer) {
				t.Errorf("the payer's address is stored in the clear in %s", table)
			}
		}
	}
}

func quotedPrintable(b []byte) io.Reader { return quotedprintable.NewReader(bytes.NewReader(b)) }

// TestTheConsoleSendsNoOnesMailForThem: a support person sending one link
// ten times gets three e-mails out, then a refusal saying why and when, in
// their language; sending a link kept for one address to another is an
// owner's to do; the sixth e-mail of a day to one address is refused, and
// its link is not made. Each refusal is in the audit log, never the
// address.
func TestTheConsoleSendsNoOnesMailForThem(t *testing.T) {
	e := setup(t)
	sink, smtpURL := mailertest.Start(t, "pay@shop1.example")
	m, err := mailer.Parse(smtpURL)
	if err != nil {
		t.Fatal(err)
	}
	e.links.Mail = m
	support := e.browser()
	csrf := support.signIn(roleUser(merchant.Support))
	const payer = "payer@example.org"
	id := linkIDOf(support.makeLink(csrf, url.Values{"amount": {"35"}, "description": {"Invoice 7"}, "email": {payer}}))
	var last *http.Response
	for range 9 {
		last = support.post("/console/links/"+id+"/send", url.Values{"csrf": {csrf}})
	}
	if got := len(sink.Sent()); got != 3 {
		t.Fatalf("%d e-mails delivered for one link, want 3", got)
	}
	doc := page(t, last, http.StatusTooManyRequests)
	if got := doc.Find("#email-error").Text(); !strings.Contains(got, "This link was e-mailed 3 times today") || last.Header.Get("Retry-After") == "" {
		t.Errorf("the refusal says %q (Retry-After %q)", got, last.Header.Get("Retry-After"))
	}
	// Another address for a link kept for one: the owner's to choose.
	other := linkIDOf(support.makeLink(csrf, url.Values{"amount": {"35"}, "description": {"Invoice 8"}, "email": {payer}}))
	doc = page(t, support.post("/console/links/"+other+"/send", url.Values{"csrf": {csrf}, "email": {"someone.else@example.org"}}), http.StatusForbidden)
	if got := doc.Find("#email-error").Text(); !strings.Contains(got, "Only an owner can send it to another address") ||
		doc.Find("#email").AttrOr("value", "") != "someone.else@example.org" {
		t.Errorf("support sending to another address: %q", got)
	}
	owner := e.browser()
	ownerCSRF := owner.signIn(shop1User)
	if res := owner.post("/console/links/"+other+"/send", url.Values{"csrf": {ownerCSRF}, "email": {"billing@example.org"}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the owner sending to another address: %d", res.StatusCode)
	}
	// One address, many links: five e-mails a day; the sixth link is not
	// made, and the form keeps what was typed.
	support.makeLink(csrf, url.Values{"amount": {"5"}, "description": {"Fee 1"}, "email": {payer}})
	doc = page(t, support.post("/console/links", url.Values{"csrf": {csrf}, "amount": {"5"}, "description": {"Fee 3"}, "email": {payer}}), http.StatusTooManyRequests)
	if got := doc.Find("#email-error").Text(); !strings.Contains(got, "This address was e-mailed 5 times today") ||
		doc.Find("#description").AttrOr("value", "") != "Fee 3" || doc.Find("#email").AttrOr("value", "") != payer {
		t.Errorf("the sixth e-mail to one address: %q", got)
	}
	if res := support.post("/console/account/language", url.Values{"csrf": {csrf}, "language": {"de"}, "back": {"/console/links"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatal("choosing German")
	}
	de := page(t, support.post("/console/links/"+id+"/send", url.Values{"csrf": {csrf}}), http.StatusTooManyRequests)
	if got := de.Find("#email-error").Text(); got == "" || strings.Contains(got, "This link was e-mailed") {
		t.Errorf("the German refusal reads %q", got)
	}
	audit := e.auditText("shop1")
	if n := strings.Count(audit, "mailRefused"); n != 9 {
		t.Errorf("%d refusals in the audit log, want 9:\n%s", n, audit)
	}
	if strings.Contains(audit, "example.org") {
		t.Error("an address is in the audit log")
	}
}

// TestALinksExpiryAndTextAreCheckedBeforeUse: hours or days past a year
// are refused before any arithmetic (5124097 hours once wrapped around to
// a link of 1.4 hours); a description or reference holding a right-to-left
// override or a zero-width space is refused, naming its field, with what
// was typed kept.
func TestALinksExpiryAndTextAreCheckedBeforeUse(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(roleUser(merchant.Support))
	for field, value := range map[string]string{"expires_in_hours": "5124097", "expires_in_days": "106751991167301"} {
		doc := page(t, b.post("/console/links", url.Values{"csrf": {csrf}, "amount": {"10"}, "description": {"Parking"}, field: {value}}), http.StatusUnprocessableEntity)
		if got := doc.Find("#" + field + "-error").Text(); !strings.Contains(got, "From 1 hour to 365 days") || doc.Find("#"+field).AttrOr("value", "") != value {
			t.Errorf("%s=%s: %q", field, value, got)
		}
	}
	doc := page(t, b.post("/console/links", url.Values{"csrf": {csrf}, "amount": {"10"}, "description": {"Invoice \u202egnp.exe"},
		"reference": {"INV\u200b-7"}}), http.StatusUnprocessableEntity)
	for _, field := range []string{"description", "reference"} {
		if got := doc.Find("#" + field + "-error").Text(); !strings.Contains(got, "invisible formatting character") {
			t.Errorf("%s with a hidden character: %q", field, got)
		}
	}
	if doc.Find("#description").AttrOr("value", "") != "Invoice \u202egnp.exe" {
		t.Error("the description typed is lost")
	}
}

// TestALinkSpeaksThePayersLanguageUnlessOneIsChosen: the form starts on
// the payer's own language (their browser's), whatever the console's;
// a link made so says it on its page.
func TestALinkSpeaksThePayersLanguageUnlessOneIsChosen(t *testing.T) {
	e := setup(t)
	b := e.browser()
	csrf := b.signIn(shop1User)
	doc := page(t, b.get("/console/links"), http.StatusOK)
	selected := doc.Find(`#lang option[selected]`)
	if v, _ := selected.Attr("value"); selected.Length() != 1 || v != "" {
		t.Fatalf("the form's language starts on %q, want the payer's own", v)
	}
	if _, has := selected.Attr("lang"); has {
		t.Error("the payer's-own choice claims a language of its own")
	}
	address := b.makeLink(csrf, url.Values{"amount": {"12.00"}, "description": {"Browser language"}, "kind": {"single"},
		"lang": {""}, "expires_in_days": {"30"}})
	if got := page(t, b.get(address), http.StatusOK).Text(); !strings.Contains(got, "The payer's own (their browser's)") {
		t.Error("the link's page does not say it speaks the payer's language")
	}
}
