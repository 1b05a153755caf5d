package theme_test

import (
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
