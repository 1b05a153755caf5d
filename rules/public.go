package rules

import "net/netip"

// PublicAddress reports whether addr is an address of the public internet, the
// only kind the app sends webhooks to and fetches logos from outside
// sandbox mode: an address of this machine, of a network behind it (a
// private one, a carrier's shared space, a cloud's link-local metadata
// service) or of a range the IANA special-purpose registries set aside is
// not, so the app cannot be made a way into them. An IPv4 address written
// as IPv6 (::ffff:a.b.c.d, or 2002:: 6to4 around it) is judged as the IPv4
// address it reaches; a zoned address names a local link and is not
// public.
func PublicAddress(addr netip.Addr) bool {
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	addr = addr.Unmap()
	switch {
	case addr.Is4():
		return !containedIn(addr, notPublic4)
	case sixToFour.Contains(addr):
		b := addr.As16()
		return PublicAddress(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	case containedIn(addr, public6):
		return true
	}
	return globalUnicast6.Contains(addr) && !containedIn(addr, notPublic6)
}

func containedIn(addr netip.Addr, prefixes []netip.Prefix) bool {
	for _, p := range prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// notPublic4 are the IPv4 ranges that are not the public internet: the
// IANA IPv4 special-purpose registry's entries that are not globally
// reachable, the deprecated 6to4 relay anycast, multicast and the reserved
// class E (with the limited broadcast). 192.0.0.0/24 goes whole: its two
// globally reachable anycast addresses (PCP, TURN) are no merchant's
// server.
var notPublic4 = prefixes(
	"0.0.0.0/8",       // "this network" (RFC 791)
	"10.0.0.0/8",      // private (RFC 1918)
	"100.64.0.0/10",   // shared address space, carrier-grade NAT (RFC 6598)
	"127.0.0.0/8",     // loopback (RFC 1122)
	"169.254.0.0/16",  // link local, cloud metadata services (RFC 3927)
	"172.16.0.0/12",   // private (RFC 1918)
	"192.0.0.0/24",    // IETF protocol assignments (RFC 6890)
	"192.0.2.0/24",    // documentation, TEST-NET-1 (RFC 5737)
	"192.88.99.0/24",  // 6to4 relay anycast, deprecated (RFC 7526)
	"192.168.0.0/16",  // private (RFC 1918)
	"198.18.0.0/15",   // benchmarking (RFC 2544)
	"198.51.100.0/24", // documentation, TEST-NET-2 (RFC 5737)
	"203.0.113.0/24",  // documentation, TEST-NET-3 (RFC 5737)
	"224.0.0.0/4",     // multicast (RFC 5771)
	"240.0.0.0/4",     // reserved, and 255.255.255.255 broadcast (RFC 1112, RFC 919)
)

// globalUnicast6 is the only IPv6 range handed out for the public internet
// (RFC 4291): everything outside it is loopback, unspecified, IPv4-mapped
// or -translated, NAT64 (64:ff9b::/96, 64:ff9b:1::/48, which would reach
// IPv4 networks through a gateway), discard-only (100::/64), unique local
// (fc00::/7), link local (fe80::/10), multicast (ff00::/8) or unassigned.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// sixToFour is 6to4 (RFC 3056), whose addresses carry the IPv4 address of
// their relay's end.
var sixToFour = netip.MustParsePrefix("2002::/16")

// notPublic6 are the ranges inside globalUnicast6 that are not the public
// internet, from the IANA IPv6 special-purpose registry.
var notPublic6 = prefixes(
	"2001::/23",     // IETF protocol assignments: Teredo, benchmarking, ORCHID, anycast services (RFC 2928)
	"2001:db8::/32", // documentation (RFC 3849)
	"3fff::/20",     // documentation (RFC 9637)
)

// public6 are the parts of 2001::/23 that are routed unicast networks of
// the public internet, as their IPv4 counterparts are (192.52.193.0/24,
// 192.31.196.0/24). The registry's other globally reachable entries there
// are anycast service addresses or ORCHID and DRIP identifiers, which are
// not routed: no merchant's server.
var public6 = prefixes(
	"2001:3::/32",     // AMT relays (RFC 7450)
	"2001:4:112::/48", // AS112-v6 (RFC 7535)
)

func prefixes(list ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(list))
	for i, s := range list {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
