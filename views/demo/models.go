// Package demo is the sandbox's demo shop: the page a shopper comes back
// to, which checks the signed result and shows the webhooks it received.
package demo

import "github.com/paybybank/checkout/views"

// DemoShopPage is the demo merchant's return page in sandbox mode.
type DemoShopPage struct {
	views.Page
	OrderID  string
	Status   string
	Verified bool
	// Hooks are the webhooks the demo shop received for the order.
	Hooks []DemoHook
}

// DemoHook is one webhook the demo shop received.
type DemoHook struct {
	EventID  string
	Status   string
	Verified bool
}
