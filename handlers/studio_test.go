package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

func TestStudioAccess(t *testing.T) {
	off := setup(t, options{})
	if res := off.get(off.url + "/studio"); res.StatusCode != http.StatusNotFound {
		t.Errorf("outside sandbox mode without STUDIO_TOKEN the studio answers %d, want 404", res.StatusCode)
	}
	open := setup(t, options{sandbox: true})
	page(t, open.get(open.url+"/studio"), http.StatusOK)

	const token = "a-studio-token-of-32-characters-0000"
	guarded := setup(t, options{studio: token})
	res := guarded.get(guarded.url + "/studio")
	if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("no password: %d %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	for password, want := range map[string]int{"wrong": http.StatusUnauthorized, token: http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, guarded.url+"/studio", nil)
		req.SetBasicAuth("designer", password)
		res, err := guarded.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("password %q: %d, want %d", password, res.StatusCode, want)
		}
	}
}

func studioForm(change map[string]string) url.Values {
	v := url.Values{"merchant": {"shop1"}, "title": {"Shop One"}, "primaryColor": {"#0B5FFF"}, "bgColor": {"#F4F5F7"},
		"spacing": {"md"}, "radius": {"md"}, "modalShadow": {"md"}, "logoHeight": {"40px"}}
	for k, x := range change {
		v.Set(k, x)
	}
	return v
}

func TestStudioValidatesAndKeepsWhatWasTyped(t *testing.T) {
	a := setup(t, options{sandbox: true})
	doc := page(t, a.post(a.url+"/studio", studioForm(map[string]string{"primaryColor": "blue", "logoHeight": "9000px"})), http.StatusUnprocessableEntity)
	if got := text(doc, testid("field-primaryColor")+" "+testid("field-error")); !strings.Contains(got, "#RRGGBB") && !strings.Contains(got, "colour") {
		t.Errorf("colour error %q", got)
	}
	if text(doc, testid("field-logoHeight")+" "+testid("field-error")) == "" {
		t.Error("no error beside the logo height")
	}
	if got := doc.Find("#primaryColor").AttrOr("value", ""); got != "blue" {
		t.Errorf("primary colour kept as %q", got)
	}
	if got := doc.Find("#title").AttrOr("value", ""); got != "Shop One" {
		t.Errorf("title kept as %q", got)
	}
	if doc.Find(testid("preview-link")).Length() != 0 {
		t.Error("a preview link for an invalid theme")
	}
}

func TestStudioShowsContrastJSONAndAPreviewInTheDraftsLook(t *testing.T) {
	a := setup(t, options{sandbox: true})
	doc := page(t, a.post(a.url+"/studio", studioForm(map[string]string{"primaryColor": "#FFD400", "radius": "lg"})), http.StatusOK)
	if got := text(doc, testid("ratio-primary-on-card")+` [data-role="value"]`); got != "1.43:1" {
		t.Errorf("yellow on white: %q", got)
	}
	if doc.Find(testid("ratio-primary-on-card")+` [data-role="warning"][hidden]`).Length() != 0 {
		t.Error("no warning for 1.43:1")
	}
	if doc.Find(testid("ratio-text-on-primary")+` [data-role="warning"]:not([hidden])`).Length() != 0 {
		t.Error("a warning for black text on yellow")
	}
	var out struct{ Customization map[string]string }
	if err := json.Unmarshal([]byte(doc.Find(testid("studio-json")).Text()), &out); err != nil {
		t.Fatalf("the JSON does not parse: %v", err)
	}
	if out.Customization["primaryColor"] != "#FFD400" || out.Customization["radius"] != "lg" || out.Customization["logoUrl"] != "" {
		t.Errorf("JSON %v", out.Customization)
	}
	if style := doc.Find("style").Text(); !strings.Contains(style, ".studio-preview{--color-primary:#FFD400;--color-on-primary:#000000;") || !strings.Contains(style, "--radius:16px") {
		t.Errorf("the preview is not in the draft's look: %s", style)
	}

	// The preview link walks the real checkout in the draft's look, and the
	// provider receives the draft.
	link := doc.Find(testid("preview-link")).AttrOr("href", "")
	checkout := a.follow(link)
	if style := page(t, a.get(checkout), http.StatusOK).Find("style").Text(); !strings.Contains(style, "--color-primary:#FFD400") {
		t.Errorf("the previewed checkout is not in the draft's look: %s", style)
	}
	res := a.post(checkout+"/pay", url.Values{"country": {"DE"}, "bank": {"deutsche-bank"}})
	u, _ := url.Parse(link)
	got, _ := a.sandbox.Received("shop1:" + u.Query().Get("order"))
	if res.StatusCode != http.StatusSeeOther || got.Customization == nil || got.Customization.PrimaryColor != "#FFD400" {
		t.Errorf("create %d; provider received %+v", res.StatusCode, got.Customization)
	}
}

func TestPreviewThemesOnlyInSandboxMode(t *testing.T) {
	sandboxApp := setup(t, options{sandbox: true})
	link := page(t, sandboxApp.post(sandboxApp.url+"/studio", studioForm(nil)), http.StatusOK).Find(testid("preview-link")).AttrOr("href", "")
	u, _ := url.Parse(link)
	production := setup(t, options{})
	res := production.get(production.url + "/checkout?" + u.RawQuery)
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("a preview link outside sandbox mode: %d, want 400", res.StatusCode)
	}
}

func TestStudioDraftSurvivesAReload(t *testing.T) {
	a := setup(t, options{sandbox: true})
	jar, _ := cookiejar.New(nil)
	a.client.Jar = jar
	page(t, a.post(a.url+"/studio", studioForm(map[string]string{"primaryColor": "#AA0000", "title": "Draft"})), http.StatusOK)
	doc := page(t, a.get(a.url+"/studio"), http.StatusOK)
	if doc.Find("#primaryColor").AttrOr("value", "") != "#AA0000" || doc.Find("#title").AttrOr("value", "") != "Draft" {
		t.Error("the draft is lost on reload")
	}
	// The live check saves as well.
	a.get(a.url + "/studio/check?" + studioForm(map[string]string{"primaryColor": "#00AA00"}).Encode())
	if page(t, a.get(a.url+"/studio"), http.StatusOK).Find("#primaryColor").AttrOr("value", "") != "#00AA00" {
		t.Error("the live draft is lost on reload")
	}
	// Loading a merchant's theme starts over from its configuration.
	loaded := page(t, a.post(a.url+"/studio", url.Values{"merchant": {"shop1"}, "action": {"load"}}), http.StatusOK)
	if loaded.Find("#primaryColor").AttrOr("value", "") != "#0B5FFF" {
		t.Error("loading shop1's theme did not restore its primary colour")
	}
}

func TestStudioCheckAnswersTheLiveValues(t *testing.T) {
	a := setup(t, options{sandbox: true})
	res := a.get(a.url + "/studio/check?" + studioForm(map[string]string{"primaryColor": "#FFD400", "spacing": "huge"}).Encode())
	var out struct {
		Vars   map[string]string
		Errors map[string]string
		Ratios map[string]struct {
			Text string
			Warn bool
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Vars["--color-primary"] != "#FFD400" || out.Vars["--color-on-primary"] != "#000000" {
		t.Errorf("vars %v", out.Vars)
	}
	if out.Errors["spacing"] == "" || !out.Ratios["primary-on-card"].Warn {
		t.Errorf("errors %v, ratios %v", out.Errors, out.Ratios)
	}
	if _, ok := out.Errors["primaryColor"]; ok {
		t.Error("a valid colour is reported as an error")
	}
}
