package handlers_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
	u, err := url.Parse(phone)
	if err != nil || !strings.HasPrefix(phone, a.url+"/c/") || u.Query().Get("country") != "FR" || strings.Contains(phone, strings.TrimPrefix(checkout, a.url)) {
		t.Fatalf("the phone's address %q is not a new address of this checkout's French banks", phone)
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
	// On the phone: the same order.
	onPhone := page(t, a.get(phone), http.StatusOK)
	if got := text(onPhone, testid("order-id")); got != "A-1" || onPhone.Find(`[data-id="credit-agricole"]`).Length() != 1 {
		t.Errorf("the phone shows order %q and no French banks", got)
	}
	// The computer's page leads to the order's status, which tells when a
	// payment has begun.
	result := resolve(offer, handoff.Find(testid("show-result")).AttrOr("href", ""))
	if got := page(t, a.get(result), http.StatusOK).Find(testid("status")).AttrOr("data-begun", ""); got != "false" {
		t.Errorf("before paying, the status says begun=%q", got)
	}
	phoneCheckout := strings.SplitN(phone, "/banks", 2)[0]
	if res := a.post(phoneCheckout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("paying on the phone: %d", res.StatusCode)
	}
	if got := page(t, a.get(result), http.StatusOK).Find(testid("status")).AttrOr("data-begun", ""); got != "true" {
		t.Errorf("after paying on the phone, the computer's status says begun=%q", got)
	}
}
