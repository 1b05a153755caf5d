package rules

import (
	"net/netip"
	"testing"
)

// TestOnlyPublicAddressesAreWebhookAndLogoTargets holds Public to the IANA
// special-purpose registries: a merchant's server on the internet is
// reached, nothing behind the app or set aside is.
func TestOnlyPublicAddressesAreWebhookAndLogoTargets(t *testing.T) {
	public := []string{
		"1.1.1.1", "8.8.8.8", "2606:4700::1111", "2001:4860:4860::8888",
		// Either side of a refused range.
		"100.63.255.255", "100.128.0.0", "198.17.255.255", "198.20.0.0", "192.0.1.255", "192.0.3.0", "223.255.255.255",
		"2001:200::1", "2001:db9::1",
		// Globally reachable networks of the registries.
		"192.31.196.1", "192.52.193.1", "192.175.48.1", "2001:3::1", "2001:4:112::1", "2620:4f:8000::1",
		// IPv4 written as IPv6: judged as the IPv4 address.
		"::ffff:8.8.8.8", "2002:808:808::1",
	}
	refused := map[string][]string{
		"this network 0.0.0.0/8":              {"0.0.0.0", "0.1.2.3"},
		"private":                             {"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1"},
		"shared address space 100.64.0.0/10":  {"100.64.0.1", "100.127.255.254"},
		"loopback":                            {"127.0.0.1", "127.255.0.1", "::1"},
		"link local":                          {"169.254.169.254", "fe80::1", "fe80::1%eth0"},
		"IETF protocol assignments":           {"192.0.0.1", "192.0.0.9", "192.0.0.170"},
		"documentation":                       {"192.0.2.1", "198.51.100.1", "203.0.113.1", "2001:db8::1", "3fff::1"},
		"6to4 relay anycast":                  {"192.88.99.1"},
		"benchmarking 198.18.0.0/15":          {"198.18.0.1", "198.19.255.255", "2001:2::1"},
		"multicast":                           {"224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1"},
		"reserved 240.0.0.0/4":                {"240.0.0.1", "255.255.255.254"},
		"broadcast":                           {"255.255.255.255"},
		"NAT64":                               {"64:ff9b::a00:1", "64:ff9b::808:808", "64:ff9b:1::1"},
		"2001::/23 (Teredo, ORCHID, anycast)": {"2001::1", "2001:0:4136:e378::1", "2001:1::1", "2001:10::1", "2001:20::1", "2001:30::1", "2001:1ff::1"},
		"unique local fc00::/7":               {"fc00::1", "fd12:3456::1"},
		"unspecified":                         {"::"},
		"IPv4-mapped, judged by its IPv4":     {"::ffff:10.0.0.1", "::ffff:127.0.0.1", "::ffff:100.64.0.1", "::ffff:0.0.0.0"},
		"IPv4-compatible and -translated":     {"::a00:1", "::808:808", "::ffff:0:808:808"},
		"discard-only 100::/64":               {"100::1"},
		"6to4, judged by its IPv4":            {"2002:a00:1::1", "2002:6440:1::1", "2002:7f00:1::1", "2002:c0a8:101::1"},
		"outside 2000::/3":                    {"4000::1", "5f00::1", "1::1"},
	}
	for _, s := range public {
		if !PublicAddress(netip.MustParseAddr(s)) {
			t.Errorf("%s is refused; it is public", s)
		}
	}
	for rangeName, list := range refused {
		for _, s := range list {
			if PublicAddress(netip.MustParseAddr(s)) {
				t.Errorf("%s (%s) is taken as public", s, rangeName)
			}
		}
	}
	if PublicAddress(netip.Addr{}) {
		t.Error("no address at all is taken as public")
	}
}

// TestTheDialerRefusesAnAddressThatIsNotPublicBeforeConnecting checks the
// dialer's Control itself, which runs after the socket is made and before
// it connects: no packet goes to the addresses here, with or without the
// check.
