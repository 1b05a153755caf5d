package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
)

// artifact saves a test output (a screenshot) under $ARTIFACTS_DIR, or
// artifacts/ in the repository, which git ignores.
func artifact(t *testing.T, name string, data []byte) {
	t.Helper()
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = "artifacts"
	}
	path := filepath.Join(dir, t.Name(), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s", path)
}

// testThemes are three merchants' looks, with what the browser should
// compute for them.
var testThemes = []struct {
	id, custom                          string
	button, onButton, bg, radius, shade string
	link                                string
}{
	{"blue", `{"title":"Blue Shop","primaryColor":"#0B5FFF","bgColor":"#F4F5F7","radius":"md","modalShadow":"md","spacing":"md"}`,
		"rgb(11, 95, 255)", "rgb(255, 255, 255)", "rgb(244, 245, 247)", "8px", "rgba(0, 0, 0, 0.2) 0px 4px 12px 0px", "rgb(11, 95, 255)"},
	{"yellow", `{"title":"Yellow Shop","primaryColor":"#FFD400","bgColor":"#1A1A2E","radius":"lg","modalShadow":"lg","spacing":"lg"}`,
		"rgb(255, 212, 0)", "rgb(0, 0, 0)", "rgb(26, 26, 46)", "16px", "rgba(0, 0, 0, 0.25) 0px 12px 32px 0px", "rgb(17, 24, 39)"},
	{"square", `{"title":"Square Shop","primaryColor":"#14532D","bgColor":"#FFFFFF","radius":"none","modalShadow":"none","spacing":"sm"}`,
		"rgb(20, 83, 45)", "rgb(255, 255, 255)", "rgb(255, 255, 255)", "0px", "none", "rgb(20, 83, 45)"},
}

// startThemed starts the app with the merchants of testThemes (and vars),
// returning it and its merchants.
func startThemed(t *testing.T, vars map[string]string) (server, *merchant.Directory) {
	t.Helper()
	var list []string
	for _, th := range testThemes {
		list = append(list, fmt.Sprintf(`{"id":%q,"name":"Shop %s","link_keys":{"k":"a-long-random-secret-for-theme-test-01"},
			"api_token":"api-token-of-the-theme-test-%s-000000","return_origins":["https://shop.example"],"customization":%s}`, th.id, th.id, th.id, th.custom))
	}
	file := filepath.Join(t.TempDir(), "merchants.json")
	if err := os.WriteFile(file, []byte(`{"merchants":[`+strings.Join(list, ",")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"MERCHANTS_FILE": file}
	for k, v := range vars {
		all[k] = v
	}
	s := start(t, all)
	dir, err := merchant.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// TestThemesOnOurPages renders the picker for three merchants with distinct
// themes and checks what the browser computes for the main button and the
// card: colour, text colour, corners, shadow.
func TestThemesOnOurPages(t *testing.T) {
	ctx := browser(t)
	themes := testThemes
	s, dir := startThemed(t, nil)

	style := func(css, property string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).getPropertyValue(%q)`, css, property)))
		if err != nil {
			t.Fatalf("%s %s: %v", css, property, err)
		}
		return v
	}
	for _, th := range themes {
		t.Run(th.id, func(t *testing.T) {
			m, _ := dir.Get(th.id)
			l := order.Link{Order: order.Order{ID: "T-" + th.id, Amount: "49.90", Currency: "EUR",
				ReturnURL: "https://shop.example/done", KID: "k", Country: "DE", Bank: "deutsche-bank"}, TTL: time.Hour}
			link, err := l.URL(s.base, m, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			step(t, ctx, "open the details step in theme "+th.id, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="continue"]`)))
			button, card := `[data-testid="continue"]`, `[data-testid="card"]`
			checks := []struct{ what, got, want string }{
				{"button colour", style(button, "background-color"), th.button},
				{"button text", style(button, "color"), th.onButton},
				{"button corners", style(button, "border-top-left-radius"), th.radius},
				{"card corners", style(card, "border-top-left-radius"), th.radius},
				{"card shadow", style(card, "box-shadow"), th.shade},
				{"page", style("body", "background-color"), th.bg},
				// A primary colour unreadable on the card leaves links near-black.
				{"link on the card", style(`[data-testid="change-bank"]`, "color"), th.link},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
				}
			}
			var custom struct{ Title string }
			json.Unmarshal([]byte(th.custom), &custom)
			if header, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="merchant"]`))); header != custom.Title {
				t.Errorf("header %q, want the theme's title %q", header, custom.Title)
			}
			shot := value(t, ctx, "a screenshot", chromedp.FullScreenshot(100))
			artifact(t, "pay.png", shot)
		})
	}
}
