package handlers_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/order"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
)

// designer changes shop1's look, as the console's Branding page does.
var designer = settings.Actor{Name: "designer@shop1.example"}

// consoleShop1 moves shop1 from the merchants file to the console, where
// its look can change.
func consoleShop1(t *testing.T, a *app) {
	t.Helper()
	file, err := merchant.Parse([]byte(merchantsFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.settings.Import(t.Context(), file); err != nil {
		t.Fatal(err)
	}
}

// payAt opens a checkout of order id at the bank page's details step, pays
// at a German bank and returns the look the shopper's page had and what
// the provider received.
func (a *app) payAt(t *testing.T, id string) (style, logo string, got *rules.Customization) {
	t.Helper()
	link := a.link(id, nil)
	checkout := a.follow(link)
	doc := page(t, a.get(checkout+"/pay?country=DE&bank=deutsche-bank"), http.StatusOK)
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("paying %s: %d", id, res.StatusCode)
	}
	received, _ := a.sandbox.Received("shop1:" + id)
	if c := received.Customization; c != nil {
		// The same fields, as the provider's document names them.
		got = &rules.Customization{}
		raw, _ := json.Marshal(c)
		json.Unmarshal(raw, got)
	}
	return doc.Find("style").Text(), doc.Find(testid("logo")).AttrOr("src", ""), got
}

func TestADraftNeverReachesAShopperAndPublishingDoes(t *testing.T) {
	// In sandbox mode the app's own address may be http: the tests'.
	a := setup(t, options{sandbox: true})
	consoleShop1(t, a)
	ctx := t.Context()
	m, _ := a.merchants.Get("shop1")
	live := *m.Customization

	// A draft in red with an uploaded logo: saved, not live.
	logo, err := settings.ReadLogo(logoPNG(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.settings.PutLogo(ctx, designer, "shop1", logo); err != nil {
		t.Fatal(err)
	}
	draft := live
	draft.PrimaryColor, draft.LogoURL = "#AA0000", a.url+"/brand/"+logo.Name
	if _, err := a.settings.SaveDraft(ctx, designer, "shop1", 0, draft); err != nil {
		t.Fatal(err)
	}
	style, shownLogo, got := a.payAt(t, "DRAFT-1")
	if strings.Contains(style, "#AA0000") || shownLogo != "" {
		t.Errorf("a shopper sees the draft: style %s, logo %q", style, shownLogo)
	}
	if got == nil || got.PrimaryColor == "#AA0000" || got.LogoURL != "" {
		t.Errorf("the provider received the draft: %+v", got)
	}

	// Published, the next shopper sees it and the provider receives it,
	// with the uploaded logo's address.
	if _, err := a.settings.Publish(ctx, designer, "shop1", 0, draft); err != nil {
		t.Fatal(err)
	}
	style, shownLogo, got = a.payAt(t, "LIVE-1")
	if !strings.Contains(style, "--color-primary:#AA0000") {
		t.Errorf("the published look is not the shopper's: %s", style)
	}
	if shownLogo != "/brand/"+logo.Name {
		t.Errorf("the shopper's page shows the logo at %q, want /brand/%s", shownLogo, logo.Name)
	}
	if got == nil || *got != draft {
		t.Errorf("the provider received %+v, want %+v", got, draft)
	}
	res := a.get(a.url + "/brand/" + logo.Name)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, logoPNG(t)) ||
		res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("the logo answers %d %q %q, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"), len(body))
	}
	for _, path := range []string{"/brand/" + strings.Repeat("0", 64) + ".png", "/brand/logo.svg", "/brand/" + logo.Name + "x"} {
		if res := a.get(a.url + path); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s answers %d, want 404", path, res.StatusCode)
		}
	}

	// Reverting to the first look: the next shopper is back in it.
	if _, err := a.settings.Publish(ctx, designer, "shop1", 1, live); err != nil {
		t.Fatal(err)
	}
	if _, err := a.settings.Revert(ctx, designer, "shop1", 1, 2); err != nil {
		t.Fatal(err)
	}
	if style, _, got = a.payAt(t, "REVERTED-1"); !strings.Contains(style, "--color-primary:#AA0000") || got.PrimaryColor != "#AA0000" {
		t.Errorf("after reverting to version 1: style %s, provider %+v", style, got)
	}
}

func TestPreviewThemesOnlyInSandboxMode(t *testing.T) {
	preview := func(a *app) string {
		raw, _ := json.Marshal(rules.Customization{PrimaryColor: "#FFD400"})
		return a.link("PREVIEW-1", func(l *order.Link) { l.Extra = url.Values{"theme": {string(raw)}} })
	}
	sandboxApp := setup(t, options{sandbox: true})
	checkout := sandboxApp.follow(preview(sandboxApp))
	if style := page(t, sandboxApp.get(checkout), http.StatusOK).Find("style").Text(); !strings.Contains(style, "--color-primary:#FFD400") {
		t.Errorf("the previewed checkout is not in the draft's look: %s", style)
	}
	production := setup(t, options{})
	if res := production.get(preview(production)); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a preview link outside sandbox mode: %d, want 400", res.StatusCode)
	}
}

// logoPNG is a small logo of varied colours.
func logoPNG(t testing.TB) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 120, 40))
	for x := range 120 {
		for y := range 40 {
			img.Set(x, y, color.NRGBA{uint8(2 * x), uint8(6 * y), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
