package checkout_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/paybybank/checkout/i18n"
	"github.com/paybybank/checkout/views"
	"github.com/paybybank/checkout/views/checkout"
	"github.com/paybybank/checkout/views/demo"
)

// evil is upstream or shopper text that must stay text.
const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`

// render renders a component in English into a document.
func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(i18n.With(context.Background(), i18n.New("en")), &buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<script>alert") || strings.Contains(buf.String(), "<img src=x") {
		t.Fatalf("upstream text became markup:\n%s", buf.String())
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestBankItemShowsTheBankAsText(t *testing.T) {
	doc := render(t, checkout.BankItem(checkout.BankRow{ID: "b1", Name: "Bank " + evil, URL: "/c/t/pay?bank=b1", LastUsed: true, LogoURL: "https://logo.example/b1.svg"}))
	a := doc.Find(`[data-testid="bank"]`)
	if a.AttrOr("href", "") != "/c/t/pay?bank=b1" || a.AttrOr("data-id", "") != "b1" {
		t.Errorf("bank link %v", a.Nodes)
	}
	if got := doc.Find(`[data-testid="bank-name"]`).Text(); got != "Bank "+evil {
		t.Errorf("name %q", got)
	}
	if doc.Find("img").AttrOr("alt", "x") != "" || doc.Find(".badge").Text() == "" {
		t.Error("the logo is not decorative or the last-used mark is missing")
	}
	// Without a logo, the bank's initials stand in its place, hidden from
	// screen readers (the name follows).
	doc = render(t, checkout.BankItem(checkout.BankRow{ID: "b2", Name: "Sparkasse Hagen", Initials: "SH", Tone: 3, URL: "pay?bank=b2"}))
	if ph := doc.Find(`[data-testid="initials"]`); ph.Text() != "SH" || ph.AttrOr("aria-hidden", "") != "true" || !ph.HasClass("logo") || doc.Find("img").Length() != 0 {
		t.Errorf("no initials in the logo's place: %v", ph.Nodes)
	}
}

func TestOrderSummaryShowsMerchantAmountAndOrder(t *testing.T) {
	doc := render(t, checkout.OrderSummary(checkout.Summary{Merchant: "Shop " + evil, Amount: "€49.90", OrderID: "A-1 " + evil}))
	summary := doc.Find(`[data-testid="summary"]`)
	if summary.Length() != 1 || doc.Find(`[data-testid="amount"]`).Text() != "€49.90" {
		t.Fatal("no summary with the amount")
	}
	if text := summary.Text(); !strings.Contains(text, "Shop "+evil) || !strings.Contains(text, "A-1 "+evil) {
		t.Errorf("summary %q", text)
	}
}

func TestErrorSummaryLinksToEachField(t *testing.T) {
	doc := render(t, views.ErrorSummary("There is a problem", "", []views.FieldError{{ID: "iban", Message: "Check the IBAN " + evil}, {ID: "name", Message: "Type your name"}}))
	box := doc.Find(`[data-testid="error-summary"]`)
	if box.AttrOr("role", "") != "alert" {
		t.Error("the summary is not announced")
	}
	links := box.Find("a")
	if links.Length() != 2 || links.First().AttrOr("href", "") != "#iban" || links.First().Text() != "Check the IBAN "+evil {
		t.Errorf("links %d, first %q → %q", links.Length(), links.First().Text(), links.First().AttrOr("href", ""))
	}
}

func TestFieldInputTiesLabelHintAndErrorToTheInput(t *testing.T) {
	doc := render(t, views.FieldInput(views.Field{Kind: views.KindText, Name: "iban", ID: "iban", Label: "IBAN", Hint: "Like DE89…",
		Value: evil, Autocomplete: "off", MaxLength: 42, Required: true, Uppercase: true, Error: "Check it"}))
	input := doc.Find("input#iban")
	if doc.Find(`[data-testid="field-iban"]`).Length() != 1 || doc.Find(`label[for="iban"]`).Text() != "IBAN" {
		t.Fatal("no labelled field")
	}
	if input.AttrOr("value", "") != evil || input.AttrOr("aria-invalid", "") != "true" || input.AttrOr("maxlength", "") != "42" {
		t.Errorf("input %v", input.Nodes[0].Attr)
	}
	for _, id := range strings.Fields(input.AttrOr("aria-describedby", "")) {
		if doc.Find("#"+id).Length() != 1 {
			t.Errorf("aria-describedby names %q, which is not on the page", id)
		}
	}
	if input.AttrOr("aria-describedby", "") == "" {
		t.Error("the hint and error are not tied to the input")
	}
}

func TestFieldInputRadioAndSelect(t *testing.T) {
	doc := render(t, views.FieldInput(views.Field{Kind: views.KindRadio, Name: "login_type", ID: "login_type", Label: "Login",
		Options: []views.Option{{Value: "personal", Label: "Personal", Selected: true}, {Value: "business", Label: "Business " + evil}}}))
	if doc.Find("fieldset legend").Text() != "Login" || doc.Find(`input[type="radio"][checked]`).AttrOr("value", "") != "personal" {
		t.Error("radio group")
	}
	doc = render(t, views.FieldInput(views.Field{Kind: views.KindSelect, Name: "payer_country", ID: "payer_country", Label: "Country",
		Options: []views.Option{{Value: "BE", Label: "Belgium"}, {Value: "FR", Label: "France", Selected: true}}}))
	if doc.Find("select#payer_country option[selected]").AttrOr("value", "") != "FR" || doc.Find("select option").Length() != 3 {
		t.Error("select with an empty choice and FR chosen")
	}
}

func TestStatusShowsItsKindAndTheWaysOn(t *testing.T) {
	doc := render(t, checkout.Status(checkout.StatusPage{Kind: checkout.StatusCanceled, Heading: "Payment cancelled", Message: evil,
		WayBackURL: "https://shop.example/done?sig=x", TryAgainURL: "/c/t/banks?country=DE", Summary: checkout.Summary{Merchant: "Shop"}}))
	status := doc.Find(`[data-testid="status"]`)
	if status.AttrOr("data-kind", "") != checkout.StatusCanceled || status.AttrOr("data-refresh", "") != "" {
		t.Errorf("status %v", status.Nodes[0].Attr)
	}
	if doc.Find(`[data-testid="status-message"]`).Text() != evil {
		t.Error("message")
	}
	if doc.Find(`[data-testid="try-again"]`).AttrOr("href", "") != "/c/t/banks?country=DE" ||
		doc.Find(`[data-testid="way-back"]`).AttrOr("target", "") != "_top" {
		t.Error("the ways on")
	}
	// One thing to do first: after a cancellation, try again; the shop is
	// the second choice.
	if doc.Find(`[data-testid="try-again"]`).AttrOr("data-emphasis", "") != "primary" || doc.Find(`[data-testid="way-back"]`).AttrOr("data-emphasis", "") != "secondary" {
		t.Error("after a cancellation the retry is not the primary action and the way back the secondary one")
	}
	pending := render(t, checkout.Status(checkout.StatusPage{Kind: checkout.StatusPending, Heading: "Waiting", Refresh: 5, RefreshURL: "/c/t/return?n=1"}))
	if pending.Find(`[data-testid="status"]`).AttrOr("data-next", "") != "/c/t/return?n=1" || pending.Find(`[data-testid="try-again"]`).Length() != 0 {
		t.Error("a pending status checks again and offers no retry")
	}
	// While the bank has not answered, approving there comes first.
	for _, kind := range []string{checkout.StatusPending, checkout.StatusProcessing, checkout.StatusChecking} {
		d := render(t, checkout.Status(checkout.StatusPage{Kind: kind, Refresh: 5}))
		if d.Find(`[data-testid="way-back"]`).AttrOr("data-emphasis", "") != "secondary" {
			t.Errorf("%s: the way back to the shop is the primary button", kind)
		}
	}
	for _, kind := range []string{checkout.StatusPaid, checkout.StatusAccepted} {
		d := render(t, checkout.Status(checkout.StatusPage{Kind: kind}))
		if d.Find(`[data-testid="way-back"]`).AttrOr("data-emphasis", "") != "primary" {
			t.Errorf("%s: the way back to the shop is not the primary button", kind)
		}
	}
}

func TestDemoShopListsItsWebhooks(t *testing.T) {
	doc := render(t, demo.DemoShop(demo.DemoShopPage{OrderID: evil, Status: "COMPLETED", Verified: true,
		Hooks: []demo.DemoHook{{EventID: "evt_1", Status: "COMPLETED", Verified: true}, {EventID: evil, Status: "X", Verified: false}}}))
	if doc.Find(`[data-testid="shop-order"]`).Text() != evil || doc.Find(`[data-testid="shop-signature"]`).Text() != "verified" {
		t.Error("the way back's summary")
	}
	rows := doc.Find(`[data-testid="shop-webhook"]`)
	if rows.Length() != 2 || rows.Eq(1).Find(`[data-testid="shop-webhook-signature"]`).Text() != "NOT valid: do not trust this status" {
		t.Errorf("%d webhook rows", rows.Length())
	}
	if render(t, demo.DemoShop(demo.DemoShopPage{})).Find(`[data-testid="shop-no-webhooks"]`).Length() != 1 {
		t.Error("no word when nothing arrived")
	}
}

// Each status has its own icon, colour and drawing, hidden from screen
// readers (the heading says it); only a paid one counts down back to the
// shop, with a way to stay, and only a pending one shows progress.
func TestEveryStatusLooksItsOwn(t *testing.T) {
	drawings := map[string]string{}
	for _, kind := range []string{checkout.StatusPaid, checkout.StatusAccepted, checkout.StatusPending, checkout.StatusCanceled, checkout.StatusProcessing} {
		p := checkout.StatusPage{Kind: kind, Heading: kind, Summary: checkout.Summary{Merchant: "Shop"}}
		if kind == checkout.StatusPending {
			p.Refresh, p.RefreshURL = 3, "/c/t/return?n=1"
		}
		doc := render(t, checkout.Status(p))
		icon := doc.Find(`[data-testid="status-icon"]`)
		if icon.AttrOr("data-icon", "") != kind || icon.AttrOr("aria-hidden", "") != "true" || !icon.HasClass("status-"+kind) {
			t.Errorf("%s: icon %v", kind, icon.Nodes)
		}
		drawing, _ := icon.Find("svg").Html()
		for other, d := range drawings {
			if d == drawing {
				t.Errorf("%s is drawn as %s is", kind, other)
			}
		}
		drawings[kind] = drawing
		countdown := doc.Find(`[data-testid="countdown"]`)
		if (countdown.Length() == 1) != (kind == checkout.StatusPaid) {
			t.Errorf("%s: %d countdowns", kind, countdown.Length())
		}
		if kind == checkout.StatusPaid && (countdown.Find(`[data-testid="stay"]`).Length() != 1 || doc.Find(`[data-testid="status"] [data-testid="countdown"]`).Length() != 0) {
			t.Error("the countdown has no way to stay, or sits in the live region")
		}
		if (doc.Find(".progress").Length() == 1) != (kind == checkout.StatusPending) {
			t.Errorf("%s: progress shown wrongly", kind)
		}
	}
}

// The step indicator says the step in words and draws as many bars done.
func TestStepSaysWhereTheShopperIs(t *testing.T) {
	doc := render(t, checkout.Step(2))
	if got := doc.Find(`[data-testid="step"]`).Text(); !strings.Contains(got, "Step 2 of 4") {
		t.Errorf("step says %q", got)
	}
	if done, all := doc.Find(".step-done").Length(), doc.Find(".step-bar > span").Length(); done != 2 || all != checkout.Steps {
		t.Errorf("%d of %d bars done, want 2 of %d", done, all, checkout.Steps)
	}
}

// The header names the merchant beside its logo, or beside its initials in
// its own colour when the theme has no logo: never a bare line of text.
func TestHeaderShowsTheMerchantsMark(t *testing.T) {
	plain := render(t, checkout.Error(checkout.ErrorPage{Page: views.Page{Theme: views.Theme{Title: "Shop One"}}, Heading: "h"}))
	mark := plain.Find(`[data-testid="header"] [data-testid="monogram"]`)
	if mark.Text() != "SO" || mark.AttrOr("aria-hidden", "") != "true" || !mark.HasClass("monogram") {
		t.Errorf("without a logo the header shows %q (aria-hidden %q)", mark.Text(), mark.AttrOr("aria-hidden", ""))
	}
	if got := plain.Find(`[data-testid="merchant"]`).Text(); got != "Shop One" {
		t.Errorf("merchant %q", got)
	}
	logo := render(t, checkout.Error(checkout.ErrorPage{Page: views.Page{Theme: views.Theme{Title: "Shop One", LogoURL: "/logos/0123456789abcdef"}}, Heading: "h"}))
	if logo.Find(`[data-testid="monogram"]`).Length() != 0 || logo.Find(`[data-testid="header"] img[data-testid="logo"]`).Length() != 1 {
		t.Error("with a logo the header shows initials too, or no logo")
	}
	if got := views.Initials("Crédit agricole du Nord"); got != "CA" {
		t.Errorf("Initials = %q", got)
	}
}
