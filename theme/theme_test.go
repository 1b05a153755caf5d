package theme_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/theme"
)

func TestContrastAgainstKnownWCAGPairs(t *testing.T) {
	tests := []struct {
		fg, bg string
		want   float64
	}{
		{"#767676", "#FFFFFF", 4.54}, // the lightest grey that passes AA on white
		{"#777777", "#FFFFFF", 4.48}, // one step lighter fails
		{"#000000", "#FFFFFF", 21},
		{"#FFFFFF", "#FFFFFF", 1},
		{"#0000FF", "#FFFFFF", 8.59},
		{"#FF0000", "#FFFFFF", 4.00},
		{"#FFFFFF", "#0B5FFF", 5.13},
	}
	for _, tt := range tests {
		got := theme.Contrast(tt.fg, tt.bg)
		if math.Abs(got-tt.want) > 0.005 {
			t.Errorf("Contrast(%s, %s) = %.3f, want %.2f", tt.fg, tt.bg, got, tt.want)
		}
		if back := theme.Contrast(tt.bg, tt.fg); back != got {
			t.Errorf("Contrast is not symmetric for %s and %s", tt.fg, tt.bg)
		}
	}
}

func TestTextOnPicksTheBetterOfBlackAndWhite(t *testing.T) {
	for bg, want := range map[string]string{
		"#0B5FFF": theme.White, "#FFD400": theme.Black, "#767676": theme.Black, "#595959": theme.White,
		"#777777": theme.Black, "#000000": theme.White, "#FFFFFF": theme.Black,
	} {
		if got := theme.TextOn(bg); got != want {
			t.Errorf("TextOn(%s) = %s, want %s", bg, got, want)
		}
	}
}

func TestNewResolvesACustomization(t *testing.T) {
	th := theme.New(&rules.Customization{Title: "Shop", PrimaryColor: "#ffd400", BgColor: "#111111",
		Radius: "lg", ModalShadow: "none", Spacing: "sm", LogoHeight: "48px", LogoURL: "https://shop.example/logo.svg"}, "fallback")
	want := theme.Theme{Title: "Shop", LogoURL: "https://shop.example/logo.svg", LogoHeight: 48, Primary: "#FFD400",
		OnPrimary: theme.Black, Accent: theme.CardInk, Bg: "#111111", Ink: theme.White, Spacing: "sm", Radius: "lg", Shadow: "none"}
	if th != want {
		t.Errorf("New = %+v\nwant %+v", th, want)
	}
	css := th.CSS(":root")
	for _, part := range []string{"--color-primary:#FFD400;", "--color-on-primary:#000000;", "--radius:16px;", "--shadow:none;", "--space:0.75rem;"} {
		if !strings.Contains(css, part) {
			t.Errorf("CSS %q lacks %q", css, part)
		}
	}
	if blue := theme.New(&rules.Customization{PrimaryColor: "#0B5FFF"}, ""); blue.Accent != "#0B5FFF" {
		t.Errorf("a readable primary is not the accent: %s", blue.Accent)
	}
	// Broken values never reach CSS: the defaults stand in.
	broken := theme.New(&rules.Customization{PrimaryColor: "red;}body{display:none", Radius: "huge", LogoURL: "javascript:alert(1)"}, "Shop")
	if broken.Primary != theme.DefaultPrimary || broken.Radius != theme.DefaultRadius || broken.LogoURL != "" || broken.Title != "Shop" {
		t.Errorf("broken customization resolved to %+v", broken)
	}
}

func TestTheSuggestedColourPassesTheCheckItIsFor(t *testing.T) {
	// Every 7th step of each channel: pale, dark, saturated and grey
	// primaries alike.
	tried := 0
	for r := 0; r < 256; r += 37 {
		for g := 0; g < 256; g += 37 {
			for b := 0; b < 256; b += 37 {
				primary := fmt.Sprintf("#%02X%02X%02X", r, g, b)
				th := theme.New(&rules.Customization{PrimaryColor: primary}, "")
				for _, c := range th.Checks() {
					if c.Passing() {
						if c.Suggestion != "" {
							t.Errorf("%s with %s passes (%.2f) but suggests %s", c.ID, primary, c.Ratio, c.Suggestion)
						}
						continue
					}
					tried++
					if c.Suggestion == "" {
						t.Fatalf("%s with %s (%.2f:1) suggests nothing", c.ID, primary, c.Ratio)
					}
					// The suggestion, put in its field, passes the same check.
					again := theme.New(&rules.Customization{PrimaryColor: c.Suggestion}, "")
					for _, c2 := range again.Checks() {
						if c2.ID == c.ID && !c2.Passing() {
							t.Errorf("%s: %s suggested for %s gives %.2f:1", c.ID, c.Suggestion, primary, c2.Ratio)
						}
					}
				}
			}
		}
	}
	if tried < 50 {
		t.Fatalf("only %d failing pairs tried", tried)
	}
}

func TestTheSuggestionIsTheNearestLightnessThatPasses(t *testing.T) {
	// Pure red on white is 4.00:1: a slightly darker red passes, barely.
	got := theme.Nearest("#FF0000", theme.Passes(theme.White))
	ratio := theme.Contrast(got, theme.White)
	if ratio < theme.MinContrast || ratio > 4.7 {
		t.Errorf("Nearest(#FF0000) = %s at %.2f:1, want just above 4.5:1", got, ratio)
	}
	if got[1:3] == "FF" || got[3:] != "0000" {
		t.Errorf("Nearest(#FF0000) = %s, want a darker pure red", got)
	}
	// A pale yellow on white goes dark; nothing changes a passing colour.
	if got := theme.Nearest("#FFD400", theme.Passes(theme.White)); theme.Contrast(got, theme.White) < theme.MinContrast {
		t.Errorf("Nearest(#FFD400) = %s fails", got)
	}
	if got := theme.Nearest("#0b5fff", theme.Passes(theme.White)); got != "#0B5FFF" {
		t.Errorf("Nearest of a passing colour = %s, want it unchanged", got)
	}
}
