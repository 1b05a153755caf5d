// Package theme turns a merchant's customization (the provider's theme
// object, docs/provider.md) into the look of our pages and of the
// provider's: colours, density, corners, shadow, and the header's title and
// logo. It also holds the WCAG contrast maths, so that text on a merchant's
// colours stays readable.
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

// Radii, Shadows and Spaces are what the customization's enums mean in CSS,
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

// Nearest is the colour closest to hex in lightness, of the same hue and
// saturation, for which passes is true: the smallest change a designer can
// make to their colour so that a contrast check passes. It walks the
// lightness away from hex both ways in steps of a quarter of a percent and
// takes the first that passes (darker on a tie); hex itself when it passes,
// "" when nothing does.
func Nearest(hex string, passes func(string) bool) string {
	if !hexColour.MatchString(hex) {
		return ""
	}
	if hex = strings.ToUpper(hex); passes(hex) {
		return hex
	}
	h, s, l := toHSL(hex)
	const step = 0.0025
	for d := step; d <= 1; d += step {
		for _, next := range []float64{l - d, l + d} {
			if next < 0 || next > 1 {
				continue
			}
			if c := fromHSL(h, s, next); passes(c) {
				return c
			}
		}
	}
	return ""
}

// Passes is the check of a colour against other: at least MinContrast.
func Passes(other string) func(string) bool {
	return func(c string) bool { return Contrast(c, other) >= MinContrast }
}

func toHSL(hex string) (h, s, l float64) {
	var rgb [3]float64
	for i := range rgb {
		n, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		rgb[i] = float64(n) / 255
	}
	r, g, b := rgb[0], rgb[1], rgb[2]
	hi, lo := max(r, g, b), min(r, g, b)
	l = (hi + lo) / 2
	if hi == lo {
		return 0, 0, l
	}
	d := hi - lo
	if l > 0.5 {
		s = d / (2 - hi - lo)
	} else {
		s = d / (hi + lo)
	}
	switch hi {
	case r:
		h = math.Mod((g-b)/d+6, 6)
	case g:
		h = (b-r)/d + 2
	default:
		h = (r-g)/d + 4
	}
	return h / 6, s, l
}

func fromHSL(h, s, l float64) string {
	channel := func(t float64) float64 {
		q := l + s - l*s
		if l < 0.5 {
			q = l * (1 + s)
		}
		p := 2*l - q
		t = math.Mod(t+1, 1)
		switch {
		case t < 1.0/6:
			return p + (q-p)*6*t
		case t < 1.0/2:
			return q
		case t < 2.0/3:
			return p + (q-p)*(2.0/3-t)*6
		}
		return p
	}
	r, g, b := channel(h+1.0/3), channel(h), channel(h-1.0/3)
	to := func(v float64) int { return int(math.Round(min(max(v, 0), 1) * 255)) }
	return fmt.Sprintf("#%02X%02X%02X", to(r), to(g), to(b))
}

// Check is one WCAG 2.2 contrast check of a theme: a pair of its colours,
// their ratio, and when it is below MinContrast the nearest value of the
// designer's own colour (Field, by its name in the customization) that
// passes.
type Check struct {
	// ID names the pair: text-on-bg, text-on-primary, primary-on-card.
	ID         string
	Fore, Back string
	Ratio      float64
	Field      string
	// Suggestion is the nearest colour of Field that passes; "" when the
	// pair passes already.
	Suggestion string
}

// Passing says whether the pair is readable.
func (c Check) Passing() bool { return c.Ratio >= MinContrast }

// Checks are the theme's contrast checks: the page's text on its
// background, the buttons' text on the primary colour, and the primary
// colour on the white card (links and outlines).
func (t Theme) Checks() []Check {
	pairs := []Check{
		{ID: "text-on-bg", Fore: t.Ink, Back: t.Bg, Field: "bgColor"},
		{ID: "text-on-primary", Fore: t.OnPrimary, Back: t.Primary, Field: "primaryColor"},
		{ID: "primary-on-card", Fore: t.Primary, Back: White, Field: "primaryColor"},
	}
	for i, p := range pairs {
		pairs[i].Ratio = Contrast(p.Fore, p.Back)
		if pairs[i].Passing() {
			continue
		}
		switch p.ID {
		case "primary-on-card":
			pairs[i].Suggestion = Nearest(t.Primary, Passes(White))
		case "text-on-bg":
			pairs[i].Suggestion = Nearest(t.Bg, func(c string) bool { return Contrast(TextOn(c), c) >= MinContrast })
		default:
			pairs[i].Suggestion = Nearest(t.Primary, func(c string) bool { return Contrast(TextOn(c), c) >= MinContrast })
		}
	}
	return pairs
}
