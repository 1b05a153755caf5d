package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paybybank/checkout/handlers/api/contracttest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/webhook"
)

// verifyWebhook is the integration guide's Go check for merchants, word for word: it
// is written from the documented format, not with this package.
func verifyWebhook(secret, header string, body []byte) bool {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			ts = v
		} else if v, ok := strings.CutPrefix(part, "v1="); ok {
			sigs = append(sigs, v) // two while a secret is being rolled
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(t, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	want := hex.EncodeToString(mac.Sum(nil))
	for _, sig := range sigs {
		if hmac.Equal([]byte(want), []byte(sig)) {
			return true
		}
	}
	return false
}

// opensslOneLiner is the integration guide's shell check; it prints the v1 signature.
const opensslOneLiner = `printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" -hex | sed 's/^.* //'`

const secret = "a-long-random-webhook-secret-of-shop1"

func TestTheIntegrationGuidesWebhookChecks(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"payment.status_changed","created_at":"2026-11-23T10:00:00Z","data":{"merchant_order_id":"Größe M & co","status":"COMPLETED","paid":true,"final":true,"amount":"49.90","currency":"EUR","attempt":1}}`)
	now := time.Now()
	header := webhook.Sign(secret, now, body)
	if !verifyWebhook(secret, header, body) {
		t.Errorf("the integration guide's Go function refuses a genuine webhook: %s", header)
	}
	if verifyWebhook(secret, header, []byte(strings.Replace(string(body), "49.90", "4990", 1))) {
		t.Error("the integration guide's Go function accepts a changed body")
	}
	if verifyWebhook(secret, webhook.Sign(secret, now.Add(-time.Hour), body), body) {
		t.Error("the integration guide's Go function accepts an hour-old signature (a replay)")
	}
	if err := webhook.Verify(secret, header, body, now, 5*time.Minute); err != nil {
		t.Errorf("Verify: %v", err)
	}

	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed: the shell one-liner is not checked")
	}
	ts, sig, _ := strings.Cut(strings.TrimPrefix(header, "t="), ",v1=")
	cmd := exec.Command("bash", "-c", opensslOneLiner)
	cmd.Env = []string{"TS=" + ts, "BODY=" + string(body), "SECRET=" + secret, "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != sig {
		t.Errorf("the integration guide's openssl line prints %q, want %q", got, sig)
	}
}

func TestWebhooksReachNoPrivateNetworkOutsideSandboxMode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	_, err := webhook.NewClient(false).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if !errors.Is(err, webhook.ErrPrivateTarget) {
		t.Errorf("a loopback target outside sandbox mode: %v, want ErrPrivateTarget", err)
	}
	res, err := webhook.NewClient(true).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil || res.StatusCode != http.StatusNoContent {
		t.Errorf("in sandbox mode: %v", err)
	}
}

func TestWebhooksFollowNoRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
	}))
	defer srv.Close()
	res, err := webhook.NewClient(true).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil || res.StatusCode != http.StatusFound {
		t.Errorf("a redirect: %v %v, want the 302 itself (a failed try)", res, err)
	}
}

func TestATestEventIsASignedPing(t *testing.T) {
	var got []byte
	var header string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		header = r.Header.Get(webhook.Header)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	d := &webhook.Dispatcher{Client: webhook.NewClient(true), Log: slog.New(slog.DiscardHandler)}
	m := &merchant.Merchant{ID: "shop1", WebhookURL: srv.URL, WebhookSecret: secret}
	try := d.Ping(context.Background(), m)
	if try.Code != http.StatusTeapot || try.Error != "" {
		t.Errorf("the endpoint's answer came back as %+v", try)
	}
	if !verifyWebhook(secret, header, got) {
		t.Errorf("the ping's signature %q does not check with the integration guide's code", header)
	}
	contracttest.CheckWebhook(t, got)
	var ping map[string]any
	if err := json.Unmarshal(got, &ping); err != nil {
		t.Fatal(err)
	}
	id, _ := ping["id"].(string)
	data, _ := ping["data"].(map[string]any)
	if ping["type"] != "ping" || !strings.HasPrefix(id, "evt_") || ping["created_at"] == nil || data == nil || len(data) != 0 || len(ping) != 4 {
		t.Errorf("ping %s, want {id, type: ping, created_at, data: {}}", got)
	}
}

func TestTheGuidesVerifierTakesEitherSignatureWhileASecretRolls(t *testing.T) {
	const fresh, old = "the-new-webhook-secret-of-the-shop-0001", "the-old-webhook-secret-of-the-shop-0001"
	body := []byte(`{"id":"evt_1","type":"ping","created_at":"2026-11-25T10:00:00Z","data":{}}`)
	header := webhook.Sign(fresh, time.Now(), body, old)
	if !strings.HasPrefix(header, "t=") || strings.Count(header, ",v1=") != 2 {
		t.Fatalf("a rolling header: %q", header)
	}
	for name, secret := range map[string]string{"the new": fresh, "the old": old} {
		if !verifyWebhook(secret, header, body) {
			t.Errorf("the guide's verifier with %s secret refuses a delivery signed by both", name)
		}
	}
	if verifyWebhook("another-secret-entirely-0000000000000000", header, body) {
		t.Error("the guide's verifier takes a secret that signed nothing")
	}
	// The API's contract describes the header with both signatures.
	raw, err := os.ReadFile("../handlers/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Parameters map[string]struct {
				Schema struct {
					Pattern string `json:"pattern"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	pattern := regexp.MustCompile(doc.Components.Parameters["Signature"].Schema.Pattern)
	for _, h := range []string{header, webhook.Sign(fresh, time.Now(), body)} {
		if !pattern.MatchString(h) {
			t.Errorf("the contract's pattern %s refuses the header %q", pattern, h)
		}
	}
}
