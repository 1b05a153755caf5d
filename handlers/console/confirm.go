package console

import (
	"maps"
	"net/http"
	"slices"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/paybybank/checkout/views/console/manage"
)

// confirmed reports whether the form of an action that cannot be taken
// back says yes. When it does not, the person is asked once, on a page of
// its own that works without a script: the question, what follows, a
// button that sends the same form again with its yes, and the way back;
// the caller then answers nothing more.
func (c *Console) confirmed(ec echo.Context, title, question, consequence, yes, back string) (bool, error) {
	if ec.FormValue("confirm") == "yes" {
		return true, nil
	}
	m := manage.ConsoleConfirm{ConsolePage: c.frame(ec, title, ""), Question: question, Consequence: consequence, Yes: yes,
		Action: templ.SafeURL(ec.Request().URL.RequestURI()), Back: templ.SafeURL(back)}
	form, err := ec.FormParams()
	if err != nil {
		return false, err
	}
	for _, name := range slices.Sorted(maps.Keys(form)) {
		if name == "csrf" || name == "confirm" {
			continue
		}
		for _, v := range form[name] {
			m.Carry = append(m.Carry, manage.ConsoleCarried{Name: name, Value: v})
		}
	}
	return false, render(ec, http.StatusOK, manage.ConsoleConfirmPage(m))
}
