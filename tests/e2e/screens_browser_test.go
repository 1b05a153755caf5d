package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paybybank/checkout/order"
)

// tapTargets lists the interactive elements the shopper can see that are
// smaller than 44 by 44 CSS pixels: links, buttons, fields, and radio
// buttons by their label (which takes the tap).
const tapTargets = `(() => {
  const small = [];
  for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary')) {
    const target = (el.type === 'radio' || el.type === 'checkbox') && el.closest('label') ? el.closest('label') : el;
    const r = target.getBoundingClientRect();
    const style = getComputedStyle(target);
    if (r.width === 0 || r.height === 0 || style.visibility === 'hidden' || r.bottom < 0 || r.right < 0) continue; // not shown (a skip link until focused)
    if (r.width < 44 - 0.5 || r.height < 44 - 0.5) small.push((target.getAttribute('data-testid') || target.tagName.toLowerCase() + (target.id ? '#' + target.id : '')) + ' ' + Math.round(r.width) + 'x' + Math.round(r.height) + ' "' + (target.textContent || target.value || '').trim().slice(0, 30) + '"');
  }
  return JSON.stringify(small);
})()`

// uncoloured lists the bank initials and status icons the stylesheet gives
// no background: their colours are chosen in Go, where the CSS build cannot
// see them whole.
const uncoloured = `JSON.stringify([...document.querySelectorAll('[data-testid="initials"], [data-testid="status-icon"]')]
  .filter(el => getComputedStyle(el).backgroundColor === 'rgba(0, 0, 0, 0)')
  .map(el => el.className))`

// TestScreensAtPhoneAndDesktopWidths saves screenshots of every shopper page
// at 390 and 1280 px, in English, Greek and Bulgarian, checks that nothing
// scrolls sideways at 320 px or at 200 % zoom (640 px at 1280), and measures
// every tap target at 390 px.
func TestScreensAtPhoneAndDesktopWidths(t *testing.T) {
	ctx := browser(t)
	s := start(t, map[string]string{"SANDBOX_COUNTRY_BANKS": "DE:2000", "SANDBOX_SETTLE_DELAY": "1h"})
	link := func(id, lang string, change func(*order.Link)) string {
		return demoOrderLink(t, s.base, id, lang, change)
	}
	wait := func(css string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(css)) }
	for _, lang := range []string{"en", "el", "bg"} {
		// Each status page looks its own: its icon and its heading.
		statuses := map[string]string{}
		for _, width := range []int64{320, 390, 640, 1280} {
			id := func(n int) string { return fmt.Sprintf("S%d-%s-%d", n, lang, width) }
			pay := func(n int, decide string) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					chromedp.Navigate(link(id(n), lang, func(l *order.Link) { l.Country, l.Bank = "DE", "deutsche-bank" })),
					wait(`[data-testid="continue"]`), click(`[data-testid="continue"]`),
					wait(`button.approve`), click(`button.` + decide), wait(`[data-testid="status"]`)}
			}
			pages := []struct {
				name    string
				actions []chromedp.Action[chromedp.Void]
			}{
				{"country", []chromedp.Action[chromedp.Void]{chromedp.Navigate(link(id(1), lang, nil)), wait(`[data-code="GR"]`)}},
				{"banks", []chromedp.Action[chromedp.Void]{chromedp.Navigate(link(id(2), lang, func(l *order.Link) { l.Country = "GR" })), chromedp.WaitVisible(chromedp.ID("q"))}},
				{"banks-2000", []chromedp.Action[chromedp.Void]{chromedp.Navigate(link(id(3), lang, func(l *order.Link) { l.Country = "DE" })), wait(`[data-testid="ranges"]`)}},
				{"details-errors", []chromedp.Action[chromedp.Void]{
					chromedp.Navigate(link(id(4), lang, func(l *order.Link) { l.Country, l.Bank = "FR", "caisse-d-epargne" })),
					chromedp.WaitVisible(chromedp.ID("iban")),
					chromedp.SendKeys(chromedp.ID("iban"), "GR16 0000"),
					click(`[data-testid="continue"]`), wait(`[data-testid="error-summary"]`)}},
				{"login", []chromedp.Action[chromedp.Void]{
					chromedp.Navigate(link(id(5), lang, func(l *order.Link) { l.Country, l.Bank = "DE", "hypovereinsbank" })), chromedp.WaitVisible(chromedp.ID("psu_id"))}},
				{"one-click", []chromedp.Action[chromedp.Void]{
					chromedp.Navigate(link(id(6), lang, func(l *order.Link) { l.Country, l.Bank = "DE", "deutsche-bank" })), wait(`[data-testid="continue"]`)}},
				{"status-accepted", pay(7, "approve")},
				{"status-cancelled", pay(8, "reject")},
				{"status-pending", pay(9, "leave")},
				{"phone", []chromedp.Action[chromedp.Void]{chromedp.Navigate(link(id(11), lang, func(l *order.Link) { l.Country = "DE" })), chromedp.WaitVisible(chromedp.ID("q")),
					chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
						_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`location.assign("phone?country=DE"); true`))
						return err
					}), wait(`[data-testid="qr"]`)}},
				{"error-expired", []chromedp.Action[chromedp.Void]{chromedp.Navigate(link(id(10), lang, func(l *order.Link) { l.TTL = -time.Minute })), wait(`[data-testid="error-heading"]`)}},
			}
			for _, p := range pages {
				t.Run(fmt.Sprintf("%s/%s/%d", lang, p.name, width), func(t *testing.T) {
					actions := append([]chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(width, 800)}, p.actions...)
					step(t, ctx, "show "+p.name, actions...)
					overflow := value(t, ctx, "how far the page scrolls sideways", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
					if overflow > 0 {
						t.Errorf("the page scrolls sideways by %d px at %d px", overflow, width)
					}
					if width == 390 && strings.HasPrefix(p.name, "status-") {
						look := value(t, ctx, "the status icon and heading", chromedp.Evaluate[string](`document.querySelector('[data-testid="status-icon"]').getAttribute("data-icon") + " / " + document.querySelector('[data-testid="status-heading"]').textContent`))
						for other, seen := range statuses {
							if strings.Split(seen, " / ")[0] == strings.Split(look, " / ")[0] || strings.Split(seen, " / ")[1] == strings.Split(look, " / ")[1] {
								t.Errorf("%s looks like %s: %s", p.name, other, look)
							}
						}
						statuses[p.name] = look
					}
					if width == 390 {
						raw := value(t, ctx, "the tap targets", chromedp.Evaluate[string](tapTargets))
						var small []string
						json.Unmarshal([]byte(raw), &small)
						if len(small) > 0 {
							t.Errorf("tap targets under 44 px:\n\t%s", strings.Join(small, "\n\t"))
						}
						raw = value(t, ctx, "the uncoloured icons", chromedp.Evaluate[string](uncoloured))
						if raw != "[]" {
							t.Errorf("initials or status icons without their colour: %s", raw)
						}
					}
					if width == 320 || width == 640 {
						return // checked, not kept
					}
					shot := value(t, ctx, "a screenshot", chromedp.FullScreenshot(100))
					artifact(t, p.name+"-"+lang+"-"+strconv.Itoa(int(width))+".png", shot)
				})
			}
		}
	}
}
