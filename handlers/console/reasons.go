package console

import (
	"errors"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/paybybank/checkout/merchant"
	"github.com/paybybank/checkout/password"
	"github.com/paybybank/checkout/rules"
	"github.com/paybybank/checkout/settings"
)

// reasonOf says, beside its field and in the person's language, why a
// value was refused. The settings, passwords and logos say their refusals
// in English for files and logs, and name them by a key of the console's
// catalog ("console.reason." + key) with the values they say; a refusal
// without a key is already in the person's language (the console said it).
func reasonOf(ec echo.Context, err error) string {
	var (
		fe *merchant.FieldError
		pr *password.Refusal
		le *settings.LogoError
	)
	switch {
	case errors.As(err, &fe):
		if fe.Key != "" {
			return t(ec, "console.reason."+fe.Key, fe.Args...)
		}
		return fieldReason(fe)
	case errors.As(err, &pr):
		return t(ec, "console.reason."+pr.Key, pr.Args...)
	case errors.As(err, &le):
		if le.Key != "" {
			return t(ec, "console.reason."+le.Key, le.Args...)
		}
		return le.Reason
	}
	return err.Error()
}

// lookReason says why a value of the look was refused, from the rule
// that refused it: the field and the kind of refusal name it.
func lookReason(ec echo.Context, fe rules.FieldError) string {
	switch field := strings.TrimPrefix(fe.Field, "customization."); {
	case field == "title" && fe.Reason == rules.ReasonTooLong:
		return t(ec, "console.reason.tooLong", rules.MaxTitleLength)
	case field == "title":
		return t(ec, "console.reason.control")
	case field == "logoUrl" && fe.Reason == rules.ReasonNotAllowed:
		return t(ec, "console.reason.https")
	case field == "logoUrl":
		return t(ec, "console.reason.webURL")
	case field == "logoHeight":
		return t(ec, "console.reason.logoHeight", rules.MinLogoHeight, rules.MaxLogoHeight)
	case field == "primaryColor" || field == "bgColor":
		return t(ec, "console.reason.colour")
	case field == "spacing":
		return t(ec, "console.reason.enum", enumLabels(ec, rules.SpacingValues))
	case field == "radius":
		return t(ec, "console.reason.enum", enumLabels(ec, rules.RadiusValues))
	case field == "modalShadow":
		return t(ec, "console.reason.enum", enumLabels(ec, rules.ShadowValues))
	}
	return fe.Message
}

// enumLabels are a customization enum's values as the editor's lists name
// them.
func enumLabels(ec echo.Context, values []string) string {
	labels := make([]string, len(values))
	for i, v := range values {
		labels[i] = t(ec, "console.branding.enum."+v)
	}
	return strings.Join(labels, ", ")
}

// roleNames are the five roles, in the person's language.
func roleNames(ec echo.Context) string {
	names := make([]string, len(merchant.Roles))
	for i, r := range merchant.Roles {
		names[i] = t(ec, "console.role."+string(r))
	}
	return strings.Join(names, ", ")
}
