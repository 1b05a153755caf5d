// Package theme turns a merchant's customization (PIS-API.md 2.4) into the
// look of our pages and of the provider's: colours, density, corners, shadow,
// and the header's title and logo. It also holds the WCAG contrast maths, so
// that text on a merchant's colours stays readable.
package theme

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/paybybank/checkout/rules"
)

// The look with no customization.
const (
	DefaultPrimary = "#0B5FFF"
	DefaultBg      = "#F4F5F7"
	DefaultSpacing = "md"
	DefaultRadius  = "md"
	DefaultShadow  = "md"
	Black          = "#000000"
	// CardInk is the text colour of the white card.
	CardInk = "#111827"
	White   = "#FFFFFF"
)

// Radii, Shadows and Spaces are what the enums of PIS-API.md 2.4 mean in CSS,
// on our pages and on the sandbox's hosted page alike.
var (
	Radii   = map[string]string{"none": "0px", "sm": "4px", "md": "8px", "lg": "16px"}
	Shadows = map[string]string{
		"none": "none",
		"sm":   "0 1px 3px rgba(0, 0, 0, 0.2)",
		"md":   "0 4px 12px rgba(0, 0, 0, 0.2)",
		"lg":   "0 12px 32px rgba(0, 0, 0, 0.25)",
	}
	Spaces = map[string]string{"sm": "0.75rem", "md": "1rem", "lg": "1.5rem"}
)

// MinContrast is the WCAG 2.2 AA ratio for normal text.
const MinContrast = 4.5

// Theme is a customization resolved for rendering: every value present,
// colours normalised to upper-case #RRGGBB.
type Theme struct {
	Title      string
	LogoURL    string
	LogoHeight int
	Primary    string
	// OnPrimary is the text colour on Primary: black or white, whichever
	// contrasts more.
	OnPrimary string
	Bg        string
	// Ink is the text colour on Bg, chosen the same way.
	Ink string
	// Accent is the primary colour where it is readable on the white card
	// (links, outlines, focus ring), else near-black: a pale primary still
	// colours the buttons, but never makes a link unreadable.
	Accent  string
	Spacing string
	Radius  string
	Shadow  string
}

var hexColour = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// New resolves c (nil for none) over the defaults. fallbackTitle names the
// page when c has no title: the merchant's name. Values that break the rules
// are ignored, so a page always renders; configuration is checked at start.
func New(c *rules.Customization, fallbackTitle string) Theme {
	t := Theme{Title: fallbackTitle, LogoHeight: 40, Primary: DefaultPrimary, Bg: DefaultBg,
		Spacing: DefaultSpacing, Radius: DefaultRadius, Shadow: DefaultShadow}
	if c != nil {
		if c.Title != "" {
			t.Title = c.Title
		}
		if rules.CheckWebURL("logoUrl", c.LogoURL) == nil {
			t.LogoURL = c.LogoURL
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(c.LogoHeight, "px")); err == nil && n >= rules.MinLogoHeight && n <= rules.MaxLogoHeight {
			t.LogoHeight = n
		}
		if hexColour.MatchString(c.PrimaryColor) {
			t.Primary = strings.ToUpper(c.PrimaryColor)
		}
		if hexColour.MatchString(c.BgColor) {
			t.Bg = strings.ToUpper(c.BgColor)
		}
		if _, ok := Spaces[c.Spacing]; ok {
			t.Spacing = c.Spacing
		}
		if _, ok := Radii[c.Radius]; ok {
			t.Radius = c.Radius
		}
		if _, ok := Shadows[c.ModalShadow]; ok {
			t.Shadow = c.ModalShadow
		}
	}
	t.OnPrimary = TextOn(t.Primary)
	t.Ink = TextOn(t.Bg)
	t.Accent = t.Primary
	if Contrast(t.Primary, White) < MinContrast {
		t.Accent = CardInk
	}
	return t
}

// Vars are the CSS custom properties of the theme, which tailwind.config.js
// maps the classes to.
func (t Theme) Vars() [][2]string {
	muted := "#4B5563"
	if t.Ink == White {
		muted = "#D1D5DB"
	}
	return [][2]string{
		{"--color-primary", t.Primary},
		{"--color-on-primary", t.OnPrimary},
		{"--color-accent", t.Accent},
		{"--color-bg", t.Bg},
		{"--color-page-ink", t.Ink},
		{"--color-page-muted", muted},
		{"--radius", Radii[t.Radius]},
		{"--shadow", Shadows[t.Shadow]},
		{"--space", Spaces[t.Spacing]},
	}
}

// CSS is a rule setting Vars on selector. Every value comes from a fixed
// table or a checked #RRGGBB, so nothing a merchant types reaches CSS as is.
func (t Theme) CSS(selector string) string {
	var b strings.Builder
	b.WriteString(selector)
	b.WriteString("{")
	for _, v := range t.Vars() {
		fmt.Fprintf(&b, "%s:%s;", v[0], v[1])
	}
	b.WriteString("}")
	return b.String()
}

// Luminance is the WCAG 2.2 relative luminance of a #RRGGBB colour.
func Luminance(hex string) float64 {
	if !hexColour.MatchString(hex) {
		return 0
	}
	var rgb [3]float64
	for i := range rgb {
		n, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(n) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		rgb[i] = c
	}
	return 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
}

// Contrast is the WCAG 2.2 contrast ratio of two colours, 1 to 21.
func Contrast(a, b string) float64 {
	la, lb := Luminance(a), Luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TextOn is black or white, whichever contrasts more with bg.
func TextOn(bg string) string {
	if Contrast(Black, bg) >= Contrast(White, bg) {
		return Black
	}
	return White
}
