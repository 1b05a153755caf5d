package console_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/theme"
)

// designerOfShop3 is shop3's designer, signed in with the editor open.
func designerOfShop3(t *testing.T, e *env, email string) (*browser, *goquery.Document) {
	t.Helper()
	e.shop3()
	ops := e.browser()
	ann, _ := e.join(invite(t, ops, ops.signIn(operator), "shop3", email, "designer"), newPassword, newPassword)
	return ann, page(t, ann.get("/console/branding"), http.StatusOK)
}

// editor is the branding form's values, changed by change.
func editor(doc *goquery.Document, change map[string]string) url.Values {
	form := url.Values{}
	doc.Find(`#branding-form input[type="hidden"], #branding-form input[type="text"]`).Each(func(_ int, s *goquery.Selection) {
		form.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	doc.Find(`#branding-form select`).Each(func(_ int, s *goquery.Selection) {
		form.Set(s.AttrOr("name", ""), s.Find("option[selected]").AttrOr("value", ""))
	})
	for k, v := range change {
		form.Set(k, v)
	}
	return form
}

func TestADesignerSavesADraftThatNoShopperSeesThenPublishesItEverywhere(t *testing.T) {
	db := ledgertest.SQLiteURL(t)
	e := setupOn(t, db)
	other := setupOn(t, db)
	ann, doc := designerOfShop3(t, e, "ann@shop3.example")
	for _, id := range []string{"preview-phone", "preview-desktop"} {
		if src := doc.Find(`[data-testid="`+id+`"]`).AttrOr("src", ""); src != "/console/branding/preview/banks?" {
			t.Errorf("%s shows %q", id, src)
		}
	}

	// A bad colour and a bad enum come back beside their fields, with
	// everything typed.
	bad := page(t, ann.post("/console/branding", editor(doc, map[string]string{"title": "Shop Three", "primaryColor": "red", "radius": "huge"})), http.StatusUnprocessableEntity)
	if bad.Find(`[data-testid="field-primaryColor"] [data-testid="field-error"]`).Length() != 1 || bad.Find(`[data-testid="field-radius"] [data-testid="field-error"]`).Length() != 1 {
		t.Error("the refused fields are not explained beside them")
	}
	if bad.Find("#title").AttrOr("value", "") != "Shop Three" || bad.Find("#primaryColor").AttrOr("value", "") != "red" {
		t.Error("what was typed is lost")
	}

	// A yellow draft: saved, previewed, never a shopper's.
	res := ann.post("/console/branding", editor(doc, map[string]string{"title": "Shop Three", "primaryColor": "#FFD400"}))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving the draft: %d", res.StatusCode)
	}
	doc = page(t, ann.get(res.Header.Get("Location")), http.StatusOK)
	if doc.Find(`[data-testid="unpublished"]`).Length() != 1 || doc.Find("#primaryColor").AttrOr("value", "") != "#FFD400" {
		t.Error("the saved draft is not shown as unpublished")
	}
	if m, _ := e.settings.Dir.Get("shop3"); m.Customization != nil {
		t.Fatalf("the draft reached the running merchant: %+v", m.Customization)
	}
	warn := doc.Find(`[data-testid="check-primary-on-card"]`)
	suggested := warn.Find(`[data-testid="use-primary-on-card"]`).AttrOr("value", "")
	colour := strings.TrimPrefix(suggested, "primaryColor:")
	if _, ok := warn.Attr("data-warn"); !ok || theme.Contrast(colour, theme.White) < theme.MinContrast {
		t.Errorf("yellow on the card: warned %v, suggests %q (%.2f:1)", ok, suggested, theme.Contrast(colour, theme.White))
	}
	preview := ann.get("/console/branding/preview/banks")
	shown := page(t, preview, http.StatusOK)
	if !strings.Contains(shown.Find("style").Text(), "--color-primary:#FFD400") || shown.Find(`[data-testid="bank"]`).Length() == 0 {
		t.Error("the bank list's preview is not in the draft's look")
	}
	if csp := preview.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors 'self'") {
		t.Errorf("the preview may not be framed by the console: %s", csp)
	}
	typed := page(t, ann.get("/console/branding/preview/paid?typed=1&primaryColor=%23AA0000"), http.StatusOK)
	if !strings.Contains(typed.Find("style").Text(), "--color-primary:#AA0000") {
		t.Error("a preview of the look typed is not in it")
	}
	for _, p := range []string{"country", "details", "one-click", "pending", "accepted", "canceled", "processing", "error"} {
		page(t, ann.get("/console/branding/preview/"+p), http.StatusOK)
	}
	page(t, ann.get("/console/branding/preview/nowhere"), http.StatusNotFound)
	// Without script, Preview posts the look typed and answers the page in
	// it, saving nothing.
	posted := page(t, ann.post("/console/branding/preview/banks", editor(doc, map[string]string{"primaryColor": "#00AA00"})), http.StatusOK)
	if !strings.Contains(posted.Find("style").Text(), "--color-primary:#00AA00") ||
		!strings.Contains(posted.Find(`[data-testid="bank"] a, a[data-testid="bank"]`).First().AttrOr("href", ""), "primaryColor=%2300AA00") {
		t.Error("the posted preview is not in the look typed, or its links lose it")
	}
	if d, _ := e.settings.Draft(ctx, mustMerchant(t, e, "shop3")); d.Custom.PrimaryColor != "#FFD400" {
		t.Errorf("a preview saved the draft: %+v", d.Custom)
	}

	// The live check answers what the page says.
	var check struct {
		Vars   map[string]string
		Errors map[string]string
		Checks map[string]struct {
			Warn       bool
			Suggestion string
		}
	}
	res = ann.get("/console/branding/check?primaryColor=%23FFD400&spacing=huge")
	json.NewDecoder(res.Body).Decode(&check)
	res.Body.Close()
	if check.Vars["--color-primary"] != "#FFD400" || check.Errors["spacing"] == "" || !check.Checks["primary-on-card"].Warn ||
		check.Checks["primary-on-card"].Suggestion != colour {
		t.Errorf("the check answers %+v", check)
	}

	// Publishing a look a check warns of asks once more.
	form := editor(doc, nil)
	asked := page(t, ann.post("/console/branding/publish", form), http.StatusUnprocessableEntity)
	if asked.Find(`[data-testid="publish-anyway"]`).Length() != 1 {
		t.Fatal("no publish-anyway after a warning")
	}
	form = editor(asked, map[string]string{"anyway": "1"})
	published := time.Now()
	if res := ann.post("/console/branding/publish", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("publishing anyway: %d", res.StatusCode)
	}
	// The other instance serves it, waited on as a condition; the
	// figure is logged, the 2 s target is the load command's.
	waitFor(t, "the other instance serves the published look", func() bool {
		m, _ := other.settings.Dir.Get("shop3")
		return m.Customization != nil && m.Customization.PrimaryColor == "#FFD400"
	})
	t.Logf("live on the other instance %v after the publish answered", time.Since(published).Round(time.Millisecond))

	// A second designer, with the editor open from before, publishes:
	// they see the newer version first.
	stale := editor(doc, map[string]string{"primaryColor": "#0B5FFF", "anyway": "1"})
	stale.Set("draft_version", form.Get("draft_version"))
	conflict := page(t, ann.post("/console/branding/publish", stale), http.StatusConflict)
	if !strings.Contains(conflict.Find(`[data-testid="notice"]`).Text(), "Version 1 was published meanwhile by ann@shop3.example") ||
		conflict.Find(`[data-testid="field-primaryColor"] [data-testid="newer-value"] code`).Text() != "#FFD400" {
		t.Errorf("the stale publish says %q", conflict.Find(`[data-testid="notice"]`).Text())
	}
	if res := ann.post("/console/branding/publish", editor(conflict, map[string]string{"primaryColor": "#0B5FFF"})); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("publishing over the newer version once seen: %d", res.StatusCode)
	}

	// The history lists both, newest first; reverting makes version 1
	// live again as version 3.
	history := page(t, ann.get("/console/branding/history"), http.StatusOK)
	versions := history.Find(`[data-testid="version"]`)
	if versions.Length() != 2 || versions.First().AttrOr("data-version", "") != "2" || versions.First().Find(`[data-testid="live"]`).Length() != 1 {
		t.Fatalf("the history lists %d versions", versions.Length())
	}
	// Each version says what it changed as the editor names it, with the
	// value it gave and, for a colour, the colour itself.
	changed := versions.First().Find(`[data-testid="changed"]`)
	if got := strings.Join(strings.Fields(changed.Text()), " "); got != "Primary colour #0B5FFF" || changed.Find(`[data-testid="swatch"] rect`).AttrOr("fill", "") != "#0B5FFF" {
		t.Errorf("version 2 changed %q", got)
	}
	if thumb := versions.Last().Find("iframe").AttrOr("src", ""); thumb != "/console/branding/preview/banks?version=1" {
		t.Errorf("version 1's thumbnail is %q", thumb)
	}
	if !strings.Contains(page(t, ann.get("/console/branding/preview/banks?version=1"), http.StatusOK).Find("style").Text(), "#FFD400") {
		t.Error("version 1's thumbnail is not in its look")
	}
	if res := ann.post("/console/branding/revert/1", url.Values{"csrf": {csrfOf(history)}, "live_version": {"2"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revert: %d", res.StatusCode)
	}
	waitFor(t, "the other instance serves version 1 again", func() bool {
		m, _ := other.settings.Dir.Get("shop3")
		return m.Customization != nil && m.Customization.PrimaryColor == "#FFD400"
	})
	history = page(t, ann.get("/console/branding/history?done=reverted"), http.StatusOK)
	if got := history.Find(`[data-testid="version"]`).First().Find(`[data-testid="changed"]`).Text(); !strings.HasPrefix(got, "Version 1 again") {
		t.Errorf("the revert is listed as %q", got)
	}
	if lines := strings.Join(auditActions(t, e, "shop3"), "\n"); !strings.Contains(lines, "ann@shop3.example published branding version 3: version 1 again.") {
		t.Errorf("the audit log lacks the revert: %s", lines)
	}
}

// upload posts the editor with a logo file.
func upload(t *testing.T, b *browser, doc *goquery.Document, name string, data []byte) *http.Response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range editor(doc, nil) {
		w.WriteField(k, v[0])
	}
	part, _ := w.CreateFormFile("logo", name)
	part.Write(data)
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, b.e.url+"/console/branding/logo", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestALogoIsUploadedIntoTheDraftAndABadOneIsExplained(t *testing.T) {
	e := setup(t)
	ann, doc := designerOfShop3(t, e, "ann@shop3.example")
	doc = page(t, ann.post("/console/branding", editor(doc, map[string]string{"title": "Typed, not saved", "primaryColor": "blue"})), http.StatusUnprocessableEntity)
	var big bytes.Buffer
	png.Encode(&big, image.NewGray(image.Rect(0, 0, 10, 10)))
	refused := map[string][]byte{
		"logo.svg": []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`),
		"big.png":  append(big.Bytes(), make([]byte, 5<<20)...),
		"page.png": []byte("<!doctype html><title>not an image</title><script>alert(1)</script>"),
	}
	for name, data := range refused {
		got := page(t, upload(t, ann, doc, name, data), http.StatusUnprocessableEntity)
		reason := got.Find(`[data-testid="field-logo"] [data-testid="field-error"]`).Text()
		if reason == "" {
			t.Errorf("%s: refused without a reason beside the logo", name)
		}
		if got.Find("#title").AttrOr("value", "") != "Typed, not saved" {
			t.Errorf("%s: the typed title is lost", name)
		}
		t.Logf("%s: %s", name, reason)
	}
	// A PNG is kept even while a typed colour is refused: the form comes
	// back with its address in the logo field and the colour explained.
	kept := page(t, upload(t, ann, doc, "logo.png", big.Bytes()), http.StatusUnprocessableEntity)
	if !strings.Contains(kept.Find("#logoUrl").AttrOr("value", ""), "/brand/") || kept.Find(`[data-testid="field-primaryColor"] [data-testid="field-error"]`).Length() != 1 {
		t.Error("an upload beside a refused colour loses the logo or the reason")
	}
	// With the rest right, the logo goes into the saved draft.
	doc = page(t, ann.get("/console/branding"), http.StatusOK)
	res := upload(t, ann, doc, "logo.png", big.Bytes())
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a PNG upload: %d", res.StatusCode)
	}
	doc = page(t, ann.get("/console/branding"), http.StatusOK)
	logo := doc.Find("#logoUrl").AttrOr("value", "")
	if !strings.HasPrefix(logo, "http://127.0.0.1/brand/") || !strings.HasSuffix(logo, ".png") {
		t.Errorf("the draft's logo is %q", logo)
	}
	if lines := strings.Join(auditActions(t, e, "shop3"), "\n"); !strings.Contains(lines, "uploaded the logo "+strings.TrimPrefix(logo, "http://127.0.0.1/brand/")+" (image/png, ") {
		t.Errorf("the audit log lacks the upload: %s", lines)
	}
}

func TestTheStudioLeadsToTheBrandingPage(t *testing.T) {
	e := setup(t)
	res := e.browser().get("/studio")
	res.Body.Close()
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != "/console/branding" {
		t.Errorf("/studio answers %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	// A merchant the file manages is shown read-only.
	b := e.browser()
	b.signIn(shop1User)
	doc := page(t, b.get("/console/branding"), http.StatusOK)
	if doc.Find(`[data-testid="read-only"]`).Length() != 1 || doc.Find(`[data-testid="publish"]`).Length() != 0 {
		t.Error("the file's merchant can be changed on the Branding page")
	}
}

func mustMerchant(t *testing.T, e *env, id string) *merchant.Merchant {
	t.Helper()
	m, ok := e.settings.Dir.Get(id)
	if !ok {
		t.Fatalf("no merchant %s", id)
	}
	return m
}
