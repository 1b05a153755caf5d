package order_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/order"
)

// verifyReturn is the merchant's side of the way back, exactly as the integration guide
// shows it: only the standard library, so a merchant can copy it.
func verifyReturn(q url.Values, keys map[string]string) bool {
	secret, ok := keys[q.Get("kid")]
	if !ok || len(q["sig"]) != 1 {
		return false
	}
	var canonical []string
	for _, name := range []string{"kid", "merchant_order_id", "status", "ts"} {
		if len(q[name]) != 1 {
			return false
		}
		canonical = append(canonical, name+"="+q.Get(name))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strings.Join(canonical, "\n")))
	want := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(want), []byte(q.Get("sig")))
}

// opensslOneLiner is the integration guide's shell check; it prints the signature.
const opensslOneLiner = `printf 'kid=%s\nmerchant_order_id=%s\nstatus=%s\nts=%s' "$KID" "$ORDER" "$STATUS" "$TS" | openssl dgst -sha256 -hmac "$SECRET" -binary | openssl base64 -A | tr '+/' '-_' | tr -d '='`

func TestTheIntegrationGuidesMerchantSideChecks(t *testing.T) {
	_, m := shop(t)
	o := order.Order{Merchant: "shop1", ID: "Bestellung 7 – Größe M & co", ReturnURL: "https://shop.example/done?x=1", KID: "2026-11"}
	raw, err := o.WayBack(m, "COMPLETED", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	keys := map[string]string{"2026-10": "an-old-secret-still-valid-0000000000", "2026-11": "a-long-random-secret-for-shop1-0001"}
	if !verifyReturn(q, keys) {
		t.Errorf("the integration guide's Go function refuses a genuine way back %s", raw)
	}
	forged := url.Values{}
	for k, v := range q {
		forged[k] = v
	}
	forged.Set("status", "ACCEPTED_SETTLEMENT_IN_PROCESS")
	if verifyReturn(forged, keys) {
		t.Error("the integration guide's Go function accepts a changed status")
	}

	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed: the shell one-liner is not checked")
	}
	cmd := exec.Command("bash", "-c", opensslOneLiner)
	cmd.Env = []string{"KID=" + q.Get("kid"), "ORDER=" + q.Get("merchant_order_id"), "STATUS=" + q.Get("status"),
		"TS=" + q.Get("ts"), "SECRET=" + keys["2026-11"], "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != q.Get("sig") {
		t.Errorf("the integration guide's openssl line prints %q, want %q", got, q.Get("sig"))
	}
}
