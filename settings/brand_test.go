package settings_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/paybybank/checkout/ledger"
	"github.com/paybybank/checkout/ledger/ledgertest"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
)

func TestADraftIsPublishedRevertedAndNeverOverwrittenSilently(t *testing.T) {
	ledgertest.OnBoth(t, func(t *testing.T, url string) {
		l := ledgertest.Open(t, url)
		a, b := instance(t, l, key1), instance(t, l, key1)
		ann, bob := settings.Actor{Name: "ann@shop.example"}, settings.Actor{Name: "bob@shop.example"}
		if _, err := a.CreateMerchant(ctx, ann, "shop3", "Shop 3", []string{"https://shop3.example"}); err != nil {
			t.Fatal(err)
		}
		b.Load(ctx)
		m, _ := a.Dir.Get("shop3")

		// A draft saved is no setting: the running set does not move.
		before := a.Version()
		red := rules.Customization{Title: "Shop 3", PrimaryColor: "#AA0000"}
		v, err := a.SaveDraft(ctx, ann, "shop3", 0, red)
		if err != nil || v != 1 {
			t.Fatalf("first draft: version %d, %v", v, err)
		}
		a.Load(ctx)
		if a.Version() != before {
			t.Errorf("saving a draft moved the settings version %d → %d", before, a.Version())
		}
		if m, _ := a.Dir.Get("shop3"); m.Customization != nil {
			t.Errorf("a draft reached the running merchant: %+v", m.Customization)
		}
		// Bob saves from the first version after Ann saved a second: he is
		// told, with her draft.
		if _, err := a.SaveDraft(ctx, ann, "shop3", 1, rules.Customization{PrimaryColor: "#0000AA"}); err != nil {
			t.Fatal(err)
		}
		_, err = b.SaveDraft(ctx, bob, "shop3", 1, rules.Customization{PrimaryColor: "#00AA00"})
		var dc *settings.DraftConflictError
		if !errors.As(err, &dc) || dc.Newer.Custom.PrimaryColor != "#0000AA" || dc.Newer.UpdatedBy != "ann@shop.example" || dc.Newer.Version != 2 {
			t.Fatalf("Bob's stale save: %v, want Ann's draft", err)
		}
		// A bad value is refused, naming the field.
		_, err = a.SaveDraft(ctx, ann, "shop3", 2, rules.Customization{PrimaryColor: "red"})
		var ve *rules.ValidationError
		if !errors.As(err, &ve) || ve.Fields[0].Field != "customization.primaryColor" {
			t.Errorf("a bad colour: %v", err)
		}

		// Publishing is a settings change every instance loads.
		if live, err := a.Live(ctx, "shop3"); err != nil || live.Version != 0 {
			t.Errorf("before any publish the live version is %d, %v", live.Version, err)
		}
		v1, err := a.Publish(ctx, ann, "shop3", 0, red)
		if err != nil || v1 != 1 {
			t.Fatalf("publish: %d, %v", v1, err)
		}
		b.Load(ctx)
		if got, _ := b.Dir.Get("shop3"); got.Customization == nil || got.Customization.PrimaryColor != "#AA0000" || got.Version == m.Version {
			t.Fatalf("the other instance serves %+v", got.Customization)
		}
		// Bob publishes having seen nothing live: he sees Ann's version.
		_, err = b.Publish(ctx, bob, "shop3", 0, rules.Customization{PrimaryColor: "#00AA00"})
		var pc *settings.PublishConflictError
		if !errors.As(err, &pc) || pc.Newer.Version != 1 || pc.Newer.By != "ann@shop.example" || pc.Newer.Custom.PrimaryColor != "#AA0000" {
			t.Fatalf("Bob's publish over Ann's: %v", err)
		}
		if _, err := a.Publish(ctx, ann, "shop3", 1, red); !errors.Is(err, settings.ErrNothingToPublish) {
			t.Errorf("publishing the live look again: %v", err)
		}
		if _, err := b.Publish(ctx, bob, "shop3", 1, rules.Customization{Title: "Shop 3", PrimaryColor: "#00AA00", Radius: "lg"}); err != nil {
			t.Fatal(err)
		}
		// Reverting makes version 1 live again, as version 3.
		v3, err := a.Revert(ctx, ann, "shop3", 1, 2)
		if err != nil || v3 != 3 {
			t.Fatalf("revert: %d, %v", v3, err)
		}
		b.Load(ctx)
		if got, _ := b.Dir.Get("shop3"); *got.Customization != red {
			t.Errorf("after the revert the other instance serves %+v", got.Customization)
		}
		if live, err := b.Live(ctx, "shop3"); err != nil || live.Version != 3 || live.RevertedFrom != 1 || live.Custom != red {
			t.Errorf("the live version is %+v, %v; want 3, version 1 again", live, err)
		}
		// The editor starts from the look made live again, not from the
		// draft of the look reverted away from: publishing it would undo
		// the revert.
		m, _ = b.Dir.Get("shop3")
		if draft, err := b.Draft(ctx, m); err != nil || draft.Custom != red {
			t.Errorf("after the revert the editor's draft holds %+v, %v; want the live look", draft.Custom, err)
		}
		history, err := a.History(ctx, "shop3")
		if err != nil || len(history) != 3 {
			t.Fatalf("history: %+v, %v", history, err)
		}
		if h := history[0]; h.Version != 3 || h.RevertedFrom != 1 || h.By != "ann@shop.example" || !slices.Equal(h.Changed, []string{"primaryColor", "radius"}) {
			t.Errorf("the revert's entry: %+v", h)
		}
		if h := history[1]; h.By != "bob@shop.example" || !slices.Equal(h.Changed, []string{"primaryColor", "radius"}) {
			t.Errorf("Bob's entry: %+v", h)
		}
		lines, _ := l.Audit(ctx, ledger.AuditQuery{MerchantID: "shop3"})
		var actions []string
		for _, line := range lines {
			said := line.Event
			for _, a := range line.Args {
				said += " " + a.Value
			}
			actions = append(actions, said)
		}
		for _, want := range []string{settings.EventBrandDraftSaved + " title,primaryColor", settings.EventBrandPublished + " 1 title,primaryColor",
			settings.EventBrandReverted + " 3 1"} {
			if !slices.Contains(actions, want) {
				t.Errorf("the audit log lacks %q: %v", want, actions)
			}
		}
	})
}

func TestALogoIsTakenOnlyWhenItDecodesAsPNGJPEGOrWebP(t *testing.T) {
	small := pngOf(t, 120, 40)
	logo, err := settings.ReadLogo(small)
	if err != nil || logo.ContentType != "image/png" || logo.Width != 120 || logo.Height != 40 || !strings.HasSuffix(logo.Name, ".png") || len(logo.Name) != 64+4 {
		t.Fatalf("a small PNG: %+v, %v", logo.Name, err)
	}
	again, _ := settings.ReadLogo(small)
	if again.Name != logo.Name {
		t.Error("the same bytes got another name")
	}
	var jpg bytes.Buffer
	jpeg.Encode(&jpg, image.NewRGBA(image.Rect(0, 0, 50, 50)), nil)
	if logo, err := settings.ReadLogo(jpg.Bytes()); err != nil || logo.ContentType != "image/jpeg" || !strings.HasSuffix(logo.Name, ".jpg") {
		t.Errorf("a JPEG: %+v, %v", logo.ContentType, err)
	}
	refused := map[string][]byte{
		"svg":        []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="10" height="10"/></svg>`),
		"html":       []byte(`<!doctype html><script>alert(1)</script>`),
		"too big":    append(pngOf(t, 10, 10), make([]byte, 5<<20)...),
		"too wide":   pngOf(t, 2001, 10),
		"truncated":  small[:len(small)/2],
		"empty":      nil,
		"gif header": []byte("GIF89a\x01\x00\x01\x00"),
	}
	for name, data := range refused {
		_, err := settings.ReadLogo(data)
		var le *settings.LogoError
		if !errors.As(err, &le) {
			t.Errorf("%s: err = %v, want a LogoError", name, err)
			continue
		}
		t.Logf("%s: %s", name, le.Reason)
	}
	if _, err := settings.ReadLogo(refused["svg"]); !strings.Contains(err.Error(), "SVG") {
		t.Errorf("an SVG is refused without naming SVG: %v", err)
	}
}

// pngOf is a PNG of w×h pixels whose colours vary, so that it does not
// compress to nothing.
func pngOf(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x * y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEveryFieldOfALookIsNamed: the Branding page's fields, the history's
// "what changed" and the preview links all name a look's fields by
// LookValues; a field the provider adds to the customization must be
// there too, under the provider's name for it.
func TestEveryFieldOfALookIsNamed(t *testing.T) {
	var look rules.Customization
	v := reflect.ValueOf(&look).Elem()
	want := map[string]string{}
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		v.Field(i).SetString("value of " + name)
		want[name] = "value of " + name
	}
	if got := settings.LookValues(&look); !maps.Equal(got, want) {
		t.Errorf("LookValues = %v, want %v", got, want)
	}
	if len(settings.LookFields) != len(want) {
		t.Errorf("LookFields names %d fields, the customization has %d", len(settings.LookFields), len(want))
	}
	for _, name := range settings.LookFields {
		if _, ok := want[name]; !ok {
			t.Errorf("LookFields names %q, which the customization does not have", name)
		}
	}
}
