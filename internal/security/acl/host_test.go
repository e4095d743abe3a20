package acl

import (
	"net/netip"
	"testing"
)

func TestHostString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10.0.0.1", "10.0.0.1"},
		{"127.0.0.1", "127.0.0.1"},
		{"::ffff:192.168.1.2", "192.168.1.2"},
		{"::1", "0:0:0:0:0:0:0:1"},
		{"::", "0:0:0:0:0:0:0:0"},
		{"2001:db8::ff00:42:8329", "2001:db8:0:0:0:ff00:42:8329"},
		{"2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8:0:0:0:0:0:1"},
		{"fe80::1%eth0", "fe80:0:0:0:0:0:0:1%eth0"},
	} {
		if got := HostString(netip.MustParseAddr(c.in)); got != c.want {
			t.Errorf("HostString(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := HostString(netip.Addr{}); got != "" {
		t.Errorf("HostString(invalid) = %q, want empty", got)
	}
}
