package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skip2/go-qrcode"
)

// From a computer the shopper can take the checkout to their phone: the
// page's QR code holds the address it shows, which opens the same order at
// the chosen country's banks; the computer's page watches the order.
func TestTheCheckoutMovesToThePhone(t *testing.T) {
	a := setup(t, options{})
	checkout := a.enter("A-1", nil)
	bankPage := checkout + "/banks?country=FR"
	doc := page(t, a.get(bankPage), http.StatusOK)
	offer := resolve(bankPage, doc.Find(testid("handoff")).AttrOr("href", ""))
	if offer != checkout+"/phone?country=FR" {
		t.Fatalf("the offer to pay on a phone leads to %q", offer)
	}
	handoff := page(t, a.get(offer), http.StatusOK)
	phone := handoff.Find(testid("phone-url")).AttrOr("href", "")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(a.url) + `/p/[A-Z2-7]{12}$`).MatchString(phone) {
		t.Fatalf("the phone's address %q is not a short code of this app", phone)
	}
	res := a.get(phone)
	target := resolve(phone, res.Header.Get("Location"))
	u, err := url.Parse(target)
	if res.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(target, a.url+"/c/") || u.Query().Get("country") != "FR" || strings.Contains(target, strings.TrimPrefix(checkout, a.url)) {
		t.Fatalf("the phone's address leads (%d) to %q, not a new address of this checkout's French banks", res.StatusCode, target)
	}
	// Short, so the code has few modules: the checkout's own address would
	// need a code of more than twice the side, a quarter the module size.
	short, _ := qrcode.New(phone, qrcode.Medium)
	long, _ := qrcode.New(target, qrcode.Medium)
	if s, l := len(short.Bitmap()), len(long.Bitmap()); s > 41 || 2*s > l+8 {
		t.Errorf("the QR code is %d modules across (the checkout's address: %d)", s, l)
	} else {
		t.Logf("QR code %d modules across, the checkout's address would be %d", s, l)
	}
	// The QR code's modules are those of the address shown.
	d := handoff.Find(testid("qr")+" path").AttrOr("d", "")
	want, err := qrcode.New(phone, qrcode.Medium)
	if err != nil {
		t.Fatal(err)
	}
	bits := want.Bitmap()
	drawn := make([][]bool, len(bits))
	for i := range drawn {
		drawn[i] = make([]bool, len(bits))
	}
	for _, m := range regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-\d+z`).FindAllStringSubmatch(d, -1) {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		for i := range n {
			drawn[y][x+i] = true
		}
	}
	for y := range bits {
		for x := range bits[y] {
			if bits[y][x] != drawn[y][x] {
				t.Fatalf("the QR code differs from the address's at module %d,%d", x, y)
			}
		}
	}
	// On the phone: the French banks of the same order.
	onPhone := page(t, a.get(target), http.StatusOK)
	if onPhone.Find(`[data-id="credit-agricole"]`).Length() != 1 {
		t.Error("the phone shows no French banks")
	}
	details := page(t, a.get(strings.SplitN(target, "/banks", 2)[0]+"/pay?country=FR&bank=credit-agricole"), http.StatusOK)
	if got := text(details, testid("order-id")); got != "A-1" {
		t.Errorf("the phone pays order %q", got)
	}
	// The computer's page leads to the order's status, which tells when a
	// payment has begun.
	result := resolve(offer, handoff.Find(testid("show-result")).AttrOr("href", ""))
	if got := page(t, a.get(result), http.StatusOK).Find(testid("status")).AttrOr("data-begun", ""); got != "false" {
		t.Errorf("before paying, the status says begun=%q", got)
	}
	phoneCheckout := strings.SplitN(target, "/banks", 2)[0]
	if res := a.post(phoneCheckout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("paying on the phone: %d", res.StatusCode)
	}
	if got := page(t, a.get(result), http.StatusOK).Find(testid("status")).AttrOr("data-begun", ""); got != "true" {
		t.Errorf("after paying on the phone, the computer's status says begun=%q", got)
	}
	// The computer's look at the status is no return from the bank: the
	// phone has not opened the bank's page yet.
	ov, err := a.ledger.Overview(context.Background(), "shop1", time.Now().Add(-time.Hour), time.Hour, 5)
	if err != nil {
		t.Fatal(err)
	}
	if ov.Funnel.Began != 0 {
		t.Errorf("the computer's status page counted the payment as opened at the bank (%d)", ov.Funnel.Began)
	}
}

// The phone's short address works on any instance (the code is kept in the
// shared ledger), and one unknown or past its time says what to do.
func TestTheShortPhoneAddressWorksOnAnyInstanceAndExpires(t *testing.T) {
	first := setup(t, options{})
	second := setup(t, options{ledger: first.ledger})
	handoff := page(t, first.get(first.enter("A-1", nil)+"/phone?country=DE"), http.StatusOK)
	phone := handoff.Find(testid("phone-url")).AttrOr("href", "")
	code := phone[strings.LastIndex(phone, "/")+1:]
	res := second.get(second.url + "/p/" + code)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the code made on one instance, opened on another: %d", res.StatusCode)
	}
	target := resolve(second.url, res.Header.Get("Location"))
	details := page(t, second.get(strings.SplitN(target, "/banks", 2)[0]+"/pay?country=DE&bank=deutsche-bank"), http.StatusOK)
	if got := text(details, testid("order-id")); got != "A-1" {
		t.Errorf("the other instance opens order %q", got)
	}
	// Typed in lower case from the address shown, it still opens.
	if res := second.get(second.url + "/p/" + strings.ToLower(code)); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the code in lower case: %d", res.StatusCode)
	}
	// Only a checkout of this app is followed, whatever the table holds.
	if err := first.ledger.PutHandoff(context.Background(), "EVILEVILEVIL", "https://evil.example/", time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, unknown := range []string{"AAAAAAAAAAAA", "not-a-code", "EVILEVILEVIL"} {
		doc := page(t, first.get(first.url+"/p/"+unknown), http.StatusGone)
		if got := text(doc, testid("error-heading")); got != "This code has expired" {
			t.Errorf("an unknown code: %q", got)
		}
		if !strings.Contains(text(doc, testid("error-message")), "Continue on your phone") {
			t.Errorf("the page does not say how to get a new code: %q", text(doc, testid("error-message")))
		}
	}
}
