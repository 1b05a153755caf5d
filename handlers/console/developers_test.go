package console_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/webhook"
)

func TestTokensAreMadeAndRevokedOnEveryInstance(t *testing.T) {
	db := ledgertest.SQLiteURL(t)
	e := setupOn(t, db)
	other := setupOn(t, db)
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "developer"), newPassword, newPassword)
	doc := page(t, ann.get("/console/developers"), http.StatusOK)
	if got := doc.Find(`[data-testid="merchant-id"]`).Text(); got != "shop3" {
		t.Errorf("the page names merchant %q", got)
	}
	if !strings.Contains(doc.Find(`[data-testid="curl"]`).Text(), "/api/v1/links") {
		t.Error("the page has no first call to copy")
	}
	csrf := csrfOf(doc)
	make := func(name, expires string) *http.Response {
		return ann.post("/console/developers/tokens", url.Values{"csrf": {csrf}, "name": {name}, "expires": {expires}})
	}
	// Bad input: explained beside its field, nothing lost, nothing made.
	long := strings.Repeat("n", 101)
	for _, c := range []struct{ name, expires, field, says string }{
		{long, "", "name", "at most 100 characters"},
		{"", "", "name", "Required"},
		{"shop server", "2001-01-01", "expires", "The date is past"},
		{"shop server", "next week", "expires", "not a date"},
	} {
		doc := page(t, make(c.name, c.expires), http.StatusUnprocessableEntity)
		if got := doc.Find("#" + c.field + "-error").Text(); !strings.Contains(got, c.says) {
			t.Errorf("name %.10q expires %q: %s says %q", c.name, c.expires, c.field, got)
		}
		if got, _ := doc.Find(`#name`).Attr("value"); got != c.name {
			t.Errorf("the name typed came back as %.10q", got)
		}
	}
	doc = page(t, make("shop server", ""), http.StatusOK)
	token := doc.Find(`[data-testid="new-token"]`).Text()
	// Said as a person says it: the name quoted, never "last used never"
	// nor "expires no expiry".
	if notice := doc.Find(`[data-testid="notice"]`).Text(); !strings.Contains(notice, "“shop server”") {
		t.Errorf("the notice reads %q, want the token's name quoted", notice)
	}
	if row := doc.Find(`[data-testid="token"]`).Last().Text(); !strings.Contains(row, "never used") || !strings.Contains(row, "no expiry") ||
		strings.Contains(row, "last used never") || strings.Contains(row, "expires no expiry") {
		t.Errorf("a token never used, without expiry, reads %q", row)
	}
	if !regexp.MustCompile(`^pbb_test_[A-Za-z0-9_-]{43}$`).MatchString(token) {
		t.Fatalf("the new token is %q", token)
	}
	if strings.Contains(e.logText(), token) {
		t.Error("the log holds the new token")
	}
	waitFor(t, "the other instance takes the new token", func() bool {
		m, ok := other.settings.Dir.ByAPIToken(token, time.Now())
		return ok && m.ID == "shop3"
	})
	// Its last use shows, to the hour.
	id, _ := doc.Find(`[data-testid="token"]`).Last().Attr("data-token")
	used := time.Date(2026, 11, 25, 9, 41, 0, 0, time.UTC)
	if err := e.ledger.TokenUsed(ctx, id, used); err != nil {
		t.Fatal(err)
	}
	if doc := page(t, ann.get("/console/developers"), http.StatusOK); !strings.Contains(doc.Find(`[data-token="`+id+`"]`).Text(), "last used 2026-11-25 09:00") {
		t.Errorf("the token's last use reads %q", doc.Find(`[data-token="`+id+`"]`).Text())
	}
	// Asked once first: nothing is revoked until the person says yes.
	doc = page(t, ann.post("/console/developers/tokens/"+url.PathEscape(id)+"/revoke", url.Values{"csrf": {csrf}}), http.StatusOK)
	if q := doc.Find(`[data-testid="confirm"] h1`).Text(); !strings.Contains(q, "shop server") {
		t.Errorf("revoking asks %q", q)
	}
	if _, ok := other.settings.Dir.ByAPIToken(token, time.Now()); !ok {
		t.Error("the token was revoked before the person confirmed")
	}
	res := ann.post("/console/developers/tokens/"+url.PathEscape(id)+"/revoke", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	waitFor(t, "the other instance refuses the revoked token", func() bool {
		_, ok := other.settings.Dir.ByAPIToken(token, time.Now())
		return !ok
	})
	page(t, ann.post("/console/developers/tokens/"+url.PathEscape(id)+"/revoke", url.Values{"csrf": {csrf}, "confirm": {"yes"}}), http.StatusNotFound)

	// A token with an expiry works through its day, not after (tomorrow,
	// so that the test's own midnight cannot make it past).
	tomorrow := time.Now().UTC().AddDate(0, 0, 1)
	doc = page(t, make("until tomorrow night", tomorrow.Format("2006-01-02")), http.StatusOK)
	short := doc.Find(`[data-testid="new-token"]`).Text()
	midnight := tomorrow.Truncate(24 * time.Hour).Add(24 * time.Hour)
	if _, ok := e.settings.Dir.ByAPIToken(short, midnight.Add(-time.Second)); !ok {
		t.Error("a token refused on its last day")
	}
	if _, ok := e.settings.Dir.ByAPIToken(short, midnight); ok {
		t.Error("a token taken after its expiry")
	}
	lines := auditActions(t, e, "shop3")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "ann@shop3.example made the API token “until tomorrow night” (pbb_test_") ||
		!strings.Contains(lines[0], "which expires "+midnight.Format("2006-01-02 15:04:05")+" UTC.") ||
		!strings.HasPrefix(lines[1], "ann@shop3.example revoked the API token “shop server” (pbb_test_") {
		t.Errorf("shop3's audit: %v", lines)
	}
}

func TestAFilesMerchantsTokensAreShownNotChanged(t *testing.T) {
	e := setup(t)
	b := e.browser()
	b.signIn(shop1User)
	doc := page(t, b.get("/console/developers"), http.StatusOK)
	if !strings.Contains(doc.Find(`[data-testid="tokens"]`).Text(), "from the merchants file") {
		t.Errorf("shop1's token: %q", doc.Find(`[data-testid="tokens"]`).Text())
	}
	if doc.Find(`[data-testid="revoke"]`).Length() != 0 || doc.Find(`[data-testid="token-form"]`).Length() != 0 {
		t.Error("a file's merchant's tokens can be changed in the console")
	}
	page(t, b.post("/console/developers/tokens", url.Values{"csrf": {csrfOf(doc)}, "name": {"x"}}), http.StatusConflict)
}

func TestALinkKeyRetiresWithItsLinksWorkingUntilTheTimeGiven(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "owner"), newPassword, newPassword)
	doc := page(t, ann.get("/console/developers"), http.StatusOK)
	csrf := csrfOf(doc)
	first, _ := doc.Find(`[data-testid="link-key"]`).First().Attr("data-kid")
	m, _ := e.settings.Dir.Get("shop3")
	oldLink := signedLink(t, m, first, "K-1")
	if _, err := e.ledger.OpenOrder(ctx, ledger.Order{MerchantID: "shop3", OrderID: "K-1", Amount: "10.00", Currency: "EUR",
		ReturnURL: "https://shop3.example/done", KID: first}); err != nil {
		t.Fatal(err)
	}

	doc = page(t, ann.post("/console/developers/link-keys", url.Values{"csrf": {csrf}}), http.StatusOK)
	kid, secret := doc.Find(`[data-testid="new-link-key-id"]`).Text(), doc.Find(`[data-testid="new-link-key-secret"]`).Text()
	if kid == "" || kid == first || len(secret) < 43 {
		t.Fatalf("the new key: %q %q", kid, secret)
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.NewestKID() != kid || m.LinkKeys[kid] != secret {
		t.Errorf("new links are signed with %q, want the new key %q", m.NewestKID(), kid)
	}
	if got := doc.Find(`[data-kid="` + first + `"]`).Text(); !strings.Contains(got, "orders opened with it in the last 24 hours: 1") {
		t.Errorf("the old key's line: %q", got)
	}

	// A time past is refused; an hour on is taken.
	retire := func(kid, until string) *http.Response {
		return ann.post("/console/developers/link-keys/"+url.PathEscape(kid)+"/retire", url.Values{"csrf": {csrf}, "until": {until}, "confirm": {"yes"}})
	}
	page(t, retire(first, "2001-01-01T00:00"), http.StatusUnprocessableEntity)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Minute)
	if res := retire(first, until.Format("2006-01-02T15:04")); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("retire: %d", res.StatusCode)
	}
	m, _ = e.settings.Dir.Get("shop3")
	q := mustQuery(t, oldLink)
	if _, _, err := order.FromLink(q, e.settings.Dir, until.Add(-time.Minute)); err != nil {
		t.Errorf("a link of the retiring key before its time: %v", err)
	}
	if _, _, err := order.FromLink(q, e.settings.Dir, until); !errors.Is(err, order.ErrLinkInvalid) {
		t.Errorf("a link of the retired key after its time: %v, want it refused as invalid", err)
	}
	// The only key left that is not retiring stays: said on the page,
	// beside the button that makes a new one.
	doc = page(t, retire(kid, ""), http.StatusConflict)
	if !strings.Contains(doc.Find(`[data-testid="notice"]`).Text(), "make a new key first") || doc.Find(`[data-testid="make-link-key"]`).Length() != 1 {
		t.Errorf("retiring the last key: %q", doc.Find("main").Text())
	}
}

// signedLink is a link of merchant m signed with key kid.
func signedLink(t *testing.T, m *merchant.Merchant, kid, id string) string {
	t.Helper()
	u, err := order.Link{Order: order.Order{ID: id, Amount: "10.00", Currency: "EUR", ReturnURL: m.ReturnOrigins[0] + "/done", KID: kid},
		TTL: 48 * time.Hour}.URL("https://pay.example", m, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// hookServer answers every POST with code and keeps each signature header.
type hookServer struct {
	url    string
	mu     sync.Mutex
	code   int
	sigs   []string
	bodies [][]byte
}

func newHookServer(t *testing.T, code int) *hookServer {
	t.Helper()
	h := &hookServer{code: code}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		h.sigs = append(h.sigs, r.Header.Get(webhook.Header))
		h.bodies = append(h.bodies, body)
		w.WriteHeader(h.code)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

func (h *hookServer) last() (string, []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sigs[len(h.sigs)-1], h.bodies[len(h.bodies)-1]
}

func TestAWebhookEndpointIsPingedBeforeItIsSavedAndItsSecretRolls(t *testing.T) {
	e := setup(t)
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", "ann@shop3.example", "developer"), newPassword, newPassword)
	csrf := csrfOf(page(t, ann.get("/console/developers"), http.StatusOK))
	set := func(u string, anyway bool) *http.Response {
		form := url.Values{"csrf": {csrf}, "url": {u}}
		if anyway {
			form.Set("save_anyway", "on")
		}
		return ann.post("/console/developers/webhook", form)
	}
	for u, says := range map[string]string{"ftp://shop3.example/hooks": "An https address", "http://127.0.0.1/hooks": "this checkout's own"} {
		if doc := page(t, set(u, false), http.StatusUnprocessableEntity); !strings.Contains(doc.Find("#url-error").Text(), says) {
			t.Errorf("%s: %q", u, doc.Find("#url-error").Text())
		}
	}
	down := newHookServer(t, http.StatusInternalServerError)
	doc := page(t, set(down.url, false), http.StatusUnprocessableEntity)
	if !strings.Contains(doc.Find("#url-error").Text(), "HTTP 500") || doc.Find("#save_anyway").Length() != 1 {
		t.Errorf("a failing endpoint: %q", doc.Find("#url-error").Text())
	}
	if got, _ := doc.Find("#url").Attr("value"); got != down.url {
		t.Errorf("the URL typed came back as %q", got)
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.WebhookURL != "" {
		t.Fatal("a failing endpoint was saved")
	}
	up := newHookServer(t, http.StatusNoContent)
	doc = page(t, set(up.url, false), http.StatusOK)
	first := doc.Find(`[data-testid="new-webhook-secret"]`).Text()
	if m, _ := e.settings.Dir.Get("shop3"); m.WebhookURL != up.url || m.WebhookSecret != first || len(first) < 43 {
		t.Fatalf("the endpoint saved: %q with secret %q (shown %q)", m.WebhookURL, m.WebhookSecret, first)
	}
	// Saved anyway: a failing endpoint is kept when the person says so.
	page(t, set(down.url, true), http.StatusOK)
	page(t, set(up.url, false), http.StatusOK)

	// Roll with an overlap: deliveries carry both signatures.
	page(t, ann.post("/console/developers/webhook/roll-secret", url.Values{"csrf": {csrf}, "overlap": {"73"}}), http.StatusUnprocessableEntity)
	doc = page(t, ann.post("/console/developers/webhook/roll-secret", url.Values{"csrf": {csrf}, "overlap": {"24"}}), http.StatusOK)
	second := doc.Find(`[data-testid="new-webhook-secret"]`).Text()
	if second == "" || second == first {
		t.Fatalf("the rolled secret: %q", second)
	}
	ping := func() (string, []byte) {
		t.Helper()
		m, _ := e.settings.Dir.Get("shop3")
		hooks := &webhook.Dispatcher{Ledger: e.ledger, Merchants: e.settings.Dir, Owner: "test", Client: webhook.NewClient(true)}
		if d := hooks.Ping(ctx, m); d.Code != http.StatusNoContent {
			t.Fatalf("ping: %+v", d)
		}
		return up.last()
	}
	verifies := func(secret, header string, body []byte) bool {
		return webhook.Verify(secret, header, body, time.Now(), 5*time.Minute) == nil
	}
	header, body := ping()
	if n := strings.Count(header, "v1="); n != 2 || !verifies(first, header, body) || !verifies(second, header, body) {
		t.Errorf("during the overlap the header %q (%d signatures) is not verified by both secrets", header, n)
	}
	res := ann.post("/console/developers/webhook/end-overlap", url.Values{"csrf": {csrf}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("end overlap: %d", res.StatusCode)
	}
	header, body = ping()
	if n := strings.Count(header, "v1="); n != 1 || verifies(first, header, body) || !verifies(second, header, body) {
		t.Errorf("after the overlap the header %q (%d signatures) is verified by the old secret, or not by the new", header, n)
	}
	lines := auditActions(t, e, "shop3")
	if len(lines) < 4 || lines[0] != "ann@shop3.example ended the overlap: only the new webhook secret signs now." ||
		lines[1] != "ann@shop3.example rolled the webhook secret: the old one keeps signing for 24 hours." {
		t.Errorf("shop3's audit: %v", lines)
	}
	if text := strings.Join(lines, " "); strings.Contains(text, first) || strings.Contains(text, second) {
		t.Error("the audit log holds a webhook secret")
	}
}

func TestTheDevelopersPageListsTheLatestAPIRequests(t *testing.T) {
	e := setup(t)
	b := e.browser()
	b.signIn(shop1User)
	if doc := page(t, b.get("/console/developers"), http.StatusOK); doc.Find(`[data-testid="no-requests"]`).Length() != 1 {
		t.Error("no request yet, and the page does not say so")
	}
	log := ledger.NewRequestLog(e.ledger, 8)
	log.Add(ledger.APIRequest{MerchantID: "shop1", At: time.Now(), Method: "POST", Route: "/api/v1/links", Status: 201})
	log.Add(ledger.APIRequest{MerchantID: "shop2", At: time.Now(), Method: "GET", Route: "/api/v1/events", Status: 200})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { log.Run(runCtx, slog.New(slog.DiscardHandler)); close(done) }()
	defer func() { stop(); <-done }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		doc := page(t, b.get("/console/developers"), http.StatusOK)
		if rows := doc.Find(`[data-testid="api-request"]`); rows.Length() > 0 {
			if rows.Length() != 1 || !strings.Contains(rows.Text(), "POST /api/v1/links · 201") {
				t.Errorf("shop1's latest requests: %q", rows.Text())
			}
			if !strings.Contains(doc.Find(`[data-testid="embed"]`).Text(), "/static/embed.js") {
				t.Error("the page has no embed snippet")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the request does not show after a minute")
		}
	}
}
