package acl

import (
	"net/netip"
	"strconv"
	"strings"
)

// HostString renders a client address the way Kafka compares it with a
// binding's host (Java's InetAddress.getHostAddress): dotted decimal for
// IPv4, and for IPv4-mapped IPv6 addresses (Java turns those into IPv4);
// for other IPv6 addresses, eight groups of lowercase hex without leading
// zeros and without "::" compression ("0:0:0:0:0:0:0:1", not "::1"),
// followed by "%zone" when the address has one. An invalid address renders
// as "". The broker computes it once per connection and passes it to
// Authorize.
func HostString(addr netip.Addr) string {
	if !addr.IsValid() {
		return ""
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	var sb strings.Builder
	b := addr.As16()
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	if z := addr.Zone(); z != "" {
		sb.WriteByte('%')
		sb.WriteString(z)
	}
	return sb.String()
}
